// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.Consumer;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * The MAD layer under the CM protocol, as mad.c is under cm.c: a request's send window per peer (at
 * most {@link CmAgent#WINDOW} unanswered requests of a port to one peer GID; more wait for a slot), the
 * copy of the last MAD an id sent (for retransmissions and duplicate answers), retries, and the timers
 * each agent's thread fires. Guarded by the engine's lock; state lives in the ids and their agents.
 */
final class CmMad {
    private CmMad() {
    }

    /** 4.096 us * 2^t, the IB timeout encoding. */
    static long cmTimeNs(int t) {
        return 4096L << Math.min(t, 31);
    }

    static void schedule(CmId id, long delayNs) {
        id.conn.timerGen++;
        id.agent.timers.add(new CmAgent.Timer(System.nanoTime() + delayNs, id, id.conn.timerGen));
    }

    /** Stops the id's timer: its request was answered or is given up, so its flow slot goes too. */
    static void cancelTimer(CmId id) {
        id.conn.timerGen++;
        releaseSlot(id);
    }

    /**
     * Sends the request just built in the agent's tx buffer (REQ, REP, DREQ, SIDR_REQ) and arms its
     * timer, if fewer than {@link CmAgent#WINDOW} requests of this port to the same peer are unanswered;
     * otherwise it waits, without a timer, until an answer frees a slot. A peer's QP1 queue is finite
     * (the soft device's holds 256 MADs, ib_mad posts 512 receives) and a burst beyond it is dropped and
     * recovered only by the CM's retransmission seconds later; this keeps one port's burst to one peer
     * within the window however fast the program connects, accepts or disconnects.
     */
    static void sendRequest(CmId id, long delayNs) {
        CmAgent a = id.agent;
        id.conn.lastMad = a.tx.asSlice(0, GsiPort.MAD_SIZE).toArray(ValueLayout.JAVA_BYTE);
        id.conn.requestDelayNs = delayNs;
        if (id.conn.deferred) {
            return; // still waiting for a slot: the newer request goes out in its place
        }
        if (!id.conn.holdsSlot) {
            CmAgent.Flow f = a.flows.computeIfAbsent(id.dgid, k -> new CmAgent.Flow());
            if (f.inFlight >= CmAgent.WINDOW) {
                id.conn.deferred = true;
                f.waiting.add(id);
                a.deferred++;
                return;
            }
            f.inFlight++;
            id.conn.holdsSlot = true;
        }
        a.send(id.dgid);
        schedule(id, delayNs);
    }

    /** The id's request is answered or gone: its slot goes to the next request waiting for this peer. */
    static void releaseSlot(CmId id) {
        CmAgent a = id.agent;
        if (a == null || (!id.conn.holdsSlot && !id.conn.deferred)) {
            return;
        }
        CmAgent.Flow f = a.flows.get(id.dgid);
        if (id.conn.deferred) {
            id.conn.deferred = false;
            if (f != null) {
                f.waiting.remove(id);
            }
        } else {
            id.conn.holdsSlot = false;
            if (f != null) {
                f.inFlight--;
                CmId next;
                while (f.inFlight < CmAgent.WINDOW && (next = f.waiting.poll()) != null) {
                    next.conn.deferred = false;
                    next.conn.holdsSlot = true;
                    f.inFlight++;
                    MemorySegment.copy(next.conn.lastMad, 0, a.txQueued, ValueLayout.JAVA_BYTE, 0, GsiPort.MAD_SIZE);
                    a.send(a.txQueued, next.dgid);
                    schedule(next, next.conn.requestDelayNs);
                }
            }
        }
        if (f != null && f.inFlight == 0 && f.waiting.isEmpty()) {
            a.flows.remove(id.dgid);
        }
    }

    static void sendAndRemember(CmId id) {
        id.conn.lastMad = id.agent.tx.asSlice(0, GsiPort.MAD_SIZE).toArray(ValueLayout.JAVA_BYTE);
        id.agent.send(id.dgid);
    }

    static void resend(CmId id) {
        MemorySegment.copy(id.conn.lastMad, 0, id.agent.tx, ValueLayout.JAVA_BYTE, 0, GsiPort.MAD_SIZE);
        id.agent.send(id.dgid);
    }

    /**
     * One retransmission of {@code id}'s request if it has retries left (counting one down either way),
     * with its timer armed again for {@code delayNs}; false when none are left.
     */
    static boolean retry(CmId id, long delayNs) {
        if (id.conn.retriesLeft-- > 0) {
            resend(id);
            schedule(id, delayNs);
            return true;
        }
        return false;
    }

    /** {@return how long {@code a}'s thread may wait for a MAD before its next timer is due, at most {@code maxNs}} */
    static long timerWait(CmAgent a, long maxNs) {
        CmAgent.Timer t = a.timers.peek();
        return t == null ? maxNs : Math.max(0, Math.min(maxNs, t.deadlineNs() - System.nanoTime()));
    }

    /** Fires {@code a}'s timers that are due (those not cancelled or moved since) through {@code fire}. */
    static void fireDue(CmAgent a, Consumer<CmId> fire) {
        long now = System.nanoTime();
        CmAgent.Timer t;
        while ((t = a.timers.peek()) != null && t.deadlineNs() - now <= 0) {
            a.timers.poll();
            if (t.gen() == t.id().conn.timerGen) {
                try {
                    fire.accept(t.id());
                } catch (RuntimeException e) {
                    a.sendErrors++;
                }
            }
        }
    }
}
