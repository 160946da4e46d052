// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * The CM agent of one device port: owns its {@link GsiPort}, runs one receive thread that hands each
 * MAD to the engine and fires the retransmission timers of the port's connections. The thread waits at
 * most {@link #MAX_WAIT_NS} at a time, so a timer scheduled by another thread is late by at most that;
 * closing the GsiPort wakes it for good. Everything but the thread's own receive buffer is guarded by
 * the engine's lock.
 */
final class CmAgent implements Runnable {
    /** Longest receive wait: the resolution of the CM timers. */
    static final long MAX_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(10);
    /**
     * Unanswered requests (REQ, REP, DREQ, SIDR_REQ) from this port to one peer at most; more wait.
     * {@code -Drdma4j.cm.window=0} lifts the limit (to measure without it).
     */
    static final int WINDOW = Integer.getInteger("rdma4j.cm.window", 64) <= 0 ? Integer.MAX_VALUE
            : Integer.getInteger("rdma4j.cm.window", 64);
    /** MADs dispatched in one turn of the engine's lock at most (then the timers); {@code -Drdma4j.cm.batch}. */
    static final int BATCH = Math.max(1, Integer.getInteger("rdma4j.cm.batch", 64));

    /** The requests in flight to one peer GID, and those waiting for a slot (guarded by the engine's lock). */
    static final class Flow {
        int inFlight;
        final java.util.ArrayDeque<CmId> waiting = new java.util.ArrayDeque<>();
    }

    record Timer(long deadlineNs, CmId id, long gen) {
    }

    final CmEngine engine;
    final String key;
    final String deviceName;
    final Context context;
    final GsiPort gsi;
    final int portNum;
    final int gidIndex;
    final PriorityQueue<Timer> timers = new PriorityQueue<>((a, b) -> Long.compare(a.deadlineNs, b.deadlineNs));
    final MemorySegment tx = Arena.ofAuto().allocate(GsiPort.MAD_SIZE);
    /** Where a request that waited for its flow slot is copied to go out (tx may hold a MAD being built). */
    final MemorySegment txQueued = Arena.ofAuto().allocate(GsiPort.MAD_SIZE);
    final java.util.Map<org.rdma4j.verbs.Gid, Flow> flows = new java.util.HashMap<>();
    private final MemorySegment rx = Arena.ofAuto().allocate(GsiPort.MAD_SIZE);
    private final GsiPort.Source from = new GsiPort.Source();
    private final Thread thread;
    /** The ids using this port (DEVICE_REMOVAL goes to them if the port goes away under us). */
    final java.util.Set<CmId> members = new java.util.HashSet<>();
    int refs;
    volatile boolean closing;
    long malformed;
    long unmatched;
    long sendErrors;
    /** Requests that had to wait for a flow slot; engine turns with MADs, and the MADs they took. */
    long deferred;
    long turns;
    long taken;

    CmAgent(CmEngine engine, String key, String deviceName, Context context, GsiPort gsi, int portNum, int gidIndex) {
        this.engine = engine;
        this.key = key;
        this.deviceName = deviceName;
        this.context = context;
        this.gsi = gsi;
        this.portNum = portNum;
        this.gidIndex = gidIndex;
        this.thread = Thread.ofPlatform().daemon().name("rdma4j-cm-" + key).unstarted(this);
    }

    void start() {
        thread.start();
    }

    /** Sends the MAD in {@link #tx}; a failed send counts (the timers retransmit). */
    void send(org.rdma4j.verbs.Gid dest) {
        send(tx, dest);
    }

    void send(MemorySegment mad, org.rdma4j.verbs.Gid dest) {
        try {
            gsi.send(mad, dest, 0xFFFF);
        } catch (RuntimeException e) {
            sendErrors++;
        }
    }

    /** The next queued MAD into the receive buffer without waiting (under the engine's lock: never blocks). */
    boolean receiveNow() {
        try {
            return !closing && gsi.receive(rx, from, 0);
        } catch (RuntimeException e) {
            return false; // the thread's own receive sees it again and handles it
        }
    }

    void close() {
        closing = true;
        try {
            gsi.close();
        } catch (RuntimeException ignored) {
            // closing wakes the receiver; nothing else to do
        }
    }

    @Override
    public void run() {
        while (!closing) {
            long waitNs = engine.timerWait(this, MAX_WAIT_NS);
            boolean got;
            try {
                got = gsi.receive(rx, from, waitNs);
            } catch (VerbsException e) {
                if (closing) {
                    return;
                }
                if (e.errno() == Errno.EBADF) {
                    engine.agentLost(this); // the port was closed under us: the device went away
                    return;
                }
                got = false;
                java.util.concurrent.locks.LockSupport.parkNanos(MAX_WAIT_NS);
            } catch (RuntimeException e) {
                if (closing) {
                    return;
                }
                got = false;
                java.util.concurrent.locks.LockSupport.parkNanos(MAX_WAIT_NS); // a failing port must not spin a core
            }
            engine.agentTurn(this, got ? rx : null, from);
        }
    }
}
