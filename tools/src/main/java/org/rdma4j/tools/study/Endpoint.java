// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.QueuePairBuilder;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;
import org.rdma4j.verbs.WorkCompletion;

/**
 * One side of a study ping-pong, as {@code rdma_create_ep} sets it up: a context, a PD, one RC QP whose
 * sends and receives complete on separate CQs, each with its own completion channel, and one
 * registered buffer of two halves (ping at 0, pong at {@code size}). The completion waits are the
 * seed's two ways: spinning on {@code ibv_poll_cq}, or {@code rdma_get_send_comp}'s
 * poll / arm / poll / wait-for-event loop. Every wait is bounded. Used by one thread at a time.
 */
final class Endpoint implements AutoCloseable {
    /** How long one completion may take before the run is given up. */
    static final long COMPLETION_TIMEOUT_NS = 30_000_000_000L;

    final Context ctx;
    final ProtectionDomain pd;
    final Arena arena = Arena.ofShared();
    final MemorySegment buf;
    final MemoryRegion mr;
    final CompletionChannel sendChannel;
    final CompletionChannel recvChannel;
    final CompletionQueue sendCq;
    final CompletionQueue recvCq;
    final PreparedQueuePair prepared;
    final QueuePair qp;
    final int size;
    /** SendFlag.INLINE when the QP takes {@code size} bytes inline, else 0. */
    final int inlineFlag;
    private final WorkCompletion[] wc = WorkCompletion.array(1);
    /**
     * How many times this side blocked in getEvent and got an event: a completion that the first
     * poll (or the poll after arming) already found costs none. Written by the side's own thread only;
     * volatile so the other side may read it for the table.
     */
    volatile long eventWaits;
    /** The kernel thread id of the thread using this side (for {@link RunQueue}), or -1. */
    volatile int tid = -1;
    private final List<VerbsResource> owned = new ArrayList<>();

    Endpoint(Device device, int ibPort, int gidIndex, int size) {
        this.size = size;
        ctx = own(device.open());
        try {
            pd = own(ctx.allocPd());
            buf = arena.allocate(2L * size, 4096);
            mr = own(pd.regMr(buf, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ));
            sendChannel = own(ctx.createCompletionChannel());
            recvChannel = own(ctx.createCompletionChannel());
            sendCq = own(ctx.createCq(16, sendChannel, 0));
            recvCq = own(ctx.createCq(16, recvChannel, 0));
            QueuePairBuilder b = new QueuePairBuilder(pd, QpType.RC, sendCq, recvCq).port(ibPort)
                    .cap(new QpCap(16, 16, 1, 1, 64)).timeout(14).retryCnt(7).rnrRetry(7).minRnrTimer(12)
                    .maxRdAtomic(1).maxDestRdAtomic(1);
            if (gidIndex >= 0) {
                b.gidIndex(gidIndex);
            }
            prepared = b.prepare();
            qp = own(prepared.qp());
            inlineFlag = qp.cap().maxInlineData >= size ? org.rdma4j.verbs.SendFlag.INLINE : 0;
        } catch (RuntimeException e) {
            closeQuietly(e);
            throw e;
        }
    }

    private <T extends VerbsResource> T own(T r) {
        owned.add(r);
        return r;
    }

    long pingAddress() {
        return buf.address();
    }

    long pongAddress() {
        return buf.address() + size;
    }

    /**
     * Waits for one completion on the send CQ (events: with the seed's arm-and-wait loop, else
     * spinning) and checks it succeeded; returns it (valid until the next wait).
     */
    WorkCompletion awaitSend(boolean events, String what) {
        WorkCompletion w = events ? awaitEvent(sendCq, sendChannel, true, what) : spin(sendCq, what);
        return check(w, what);
    }

    /** As {@link #awaitSend}, on the receive CQ. */
    WorkCompletion awaitRecv(boolean events, String what) {
        WorkCompletion w = events ? awaitEvent(recvCq, recvChannel, false, what) : spin(recvCq, what);
        return check(w, what);
    }

    /**
     * Waits on the receive CQ with events in slices of a second, for as long as {@code keepWaiting}
     * says (the peer is still running) and at most {@code limitNs}.
     */
    WorkCompletion awaitRecvWhile(java.util.function.BooleanSupplier keepWaiting, long limitNs, String what) {
        long deadline = System.nanoTime() + limitNs;
        while (true) {
            WorkCompletion w = awaitEvent(recvCq, recvChannel, false, what, Math.min(1_000_000_000L,
                    Math.max(1, deadline - System.nanoTime())), false);
            if (w != null) {
                return check(w, what);
            }
            if (!keepWaiting.getAsBoolean()) {
                throw new StudyFailure(what + ": the peer stopped before it arrived");
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new StudyFailure(what + ": nothing arrived within " + limitNs / 1_000_000_000L + " s");
            }
        }
    }

    private WorkCompletion spin(CompletionQueue cq, String what) {
        long start = 0;
        for (int idle = 0; ; idle++) {
            if (cq.poll(wc, 1) == 1) {
                return wc[0];
            }
            Thread.onSpinWait();
            if ((idle & 1023) == 1023) {
                // as the seed's tight ibv_poll_cq loop: no yield, no park (that is the variant's CPU cost)
                long now = System.nanoTime();
                if (start == 0) {
                    start = now;
                } else if (now - start > COMPLETION_TIMEOUT_NS) {
                    throw new StudyFailure(what + ": no completion within " + COMPLETION_TIMEOUT_NS / 1_000_000_000L
                            + " s");
                }
                if (Thread.currentThread().isInterrupted()) {
                    throw new StudyFailure(what + ": interrupted");
                }
            }
        }
    }

    private WorkCompletion awaitEvent(CompletionQueue cq, CompletionChannel ch, boolean send, String what) {
        WorkCompletion w = awaitEvent(cq, ch, send, what, COMPLETION_TIMEOUT_NS, true);
        return w;
    }

    /**
     * rdma_get_send_comp / rdma_get_recv_comp: poll; arm; poll again (a completion may have come between
     * the first poll and the arming); wait for the event and acknowledge it; repeat. Returns null after
     * {@code timeoutNs} unless {@code failOnTimeout}.
     */
    private WorkCompletion awaitEvent(CompletionQueue cq, CompletionChannel ch, boolean send, String what,
            long timeoutNs, boolean failOnTimeout) {
        long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            if (cq.poll(wc, 1) == 1) {
                return wc[0];
            }
            cq.reqNotify(false);
            if (cq.poll(wc, 1) == 1) {
                return wc[0];
            }
            long leftMs = (deadline - System.nanoTime()) / 1_000_000L;
            CompletionQueue got;
            try {
                got = leftMs <= 0 ? null : ch.getEvent(leftMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StudyFailure(what + ": interrupted");
            }
            if (got == null) {
                if (failOnTimeout) {
                    throw new StudyFailure(what + ": no completion event within " + timeoutNs / 1_000_000_000L + " s");
                }
                return null;
            }
            if (got != cq) {
                throw new StudyFailure(what + ": an event for another CQ");
            }
            cq.ackEvents(1);
            eventWaits = eventWaits + 1; // one writer
        }
    }

    private static WorkCompletion check(WorkCompletion w, String what) {
        if (!w.isSuccess()) {
            throw new StudyFailure(what + " completed with " + w.status().description() + " (" + w.status().value()
                    + ", vendor error " + w.vendorErr() + ")");
        }
        return w;
    }

    @Override
    public void close() {
        RuntimeException first = null;
        for (int i = owned.size() - 1; i >= 0; i--) {
            try {
                owned.get(i).close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        owned.clear();
        if (first == null) {
            arena.close();
        } else {
            throw first; // the memory stays mapped: a registration may still point at it
        }
    }

    private void closeQuietly(RuntimeException cause) {
        try {
            close();
        } catch (VerbsException | IllegalStateException e) {
            cause.addSuppressed(e);
        }
    }
}
