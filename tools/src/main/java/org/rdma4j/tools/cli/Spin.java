// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cli;

import java.util.concurrent.locks.LockSupport;

/**
 * The pacing of one busy wait of the tools' measured loops, from one empty poll to the next: spin as
 * perftest and the C pingpongs do, yield once the wait has lasted {@link #SPIN_NS} (so that a peer or
 * device thread sharing the core gets it back within a time slice instead of after it: on a loaded
 * machine a pure spin turns microsecond waits into milliseconds), optionally park briefly after a
 * longer while, and say when the wait has lasted past the stall limit. It reads the clock only every
 * {@value #CLOCK_EVERY}th empty poll: {@link System#nanoTime()} is a system call where the kernel's
 * clocksource has no vDSO (about 1 µs a call in the TCG VM on hpet), and a wait of a few polls should
 * cost no clock read at all. Allocation free; one thread.
 */
public final class Spin {
    /** How long a wait spins before it yields between polls. */
    public static final long SPIN_NS = 20_000;
    /** Empty polls between two clock reads (a power of two). */
    public static final int CLOCK_EVERY = 64;
    /** One park of the park phase. */
    static final long PARK_NS = 20_000;

    private final long stallNs;
    private final long parkAfterNs;
    private int polls;
    private boolean started;
    private long start;
    /** 0: spin, 1: yield, 2: park. */
    private int phase;

    /** A wait that spins, then yields, and is stalled after {@code stallNs}. */
    public Spin(long stallNs) {
        this(stallNs, Long.MAX_VALUE);
    }

    /** As {@link #Spin(long)}, parking {@link #PARK_NS} between polls once it has lasted {@code parkAfterNs}. */
    public Spin(long stallNs, long parkAfterNs) {
        this.stallNs = stallNs;
        this.parkAfterNs = parkAfterNs;
    }

    /** Starts a wait (or starts it again after progress). */
    public Spin begin() {
        polls = 0;
        started = false;
        phase = 0;
        return this;
    }

    /** Empty polls since {@link #begin()}. */
    public int polls() {
        return polls;
    }

    /**
     * After an empty poll: spins, yields or parks; true once the wait has lasted longer than the stall
     * limit (measured from its {@value #CLOCK_EVERY}th poll, when the clock was first read).
     */
    public boolean idle() {
        if ((++polls & (CLOCK_EVERY - 1)) != 0) {
            pause();
            return false;
        }
        long now = System.nanoTime();
        if (!started) {
            started = true;
            start = now;
        }
        long waited = now - start;
        phase = waited >= parkAfterNs ? 2 : waited >= SPIN_NS ? 1 : 0;
        pause();
        return waited > stallNs;
    }

    private void pause() {
        if (phase == 0) {
            Thread.onSpinWait();
        } else if (phase == 1) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(PARK_NS);
        }
    }
}
