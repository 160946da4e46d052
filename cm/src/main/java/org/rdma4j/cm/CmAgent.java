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
    private final MemorySegment rx = Arena.ofAuto().allocate(GsiPort.MAD_SIZE);
    private final GsiPort.Source from = new GsiPort.Source();
    private final Thread thread;
    int refs;
    volatile boolean closing;
    long malformed;
    long unmatched;
    long sendErrors;

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
        try {
            gsi.send(tx, dest, 0xFFFF);
        } catch (RuntimeException e) {
            sendErrors++;
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
                if (closing || e.errno() == Errno.EBADF) {
                    return;
                }
                got = false;
            } catch (RuntimeException e) {
                if (closing) {
                    return;
                }
                got = false;
            }
            engine.agentTurn(this, got ? rx : null, from);
        }
    }
}
