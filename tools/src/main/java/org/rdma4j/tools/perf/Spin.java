package org.rdma4j.tools.perf;

/**
 * The pacing of one busy wait, from one empty poll to the next: spin as perftest does, yield once the
 * wait has lasted {@link #SPIN_NS} (so that a peer or device thread sharing the core gets it back
 * within a time slice instead of after it: on a loaded machine a pure spin turns microsecond waits
 * into milliseconds), and say when it has lasted past the stall limit. It reads the clock only every
 * {@value #CLOCK_EVERY}th empty poll: {@link System#nanoTime()} is a system call where the kernel's
 * clocksource has no vDSO (about 1 µs a call in the TCG VM on hpet), and a wait of a few polls should
 * cost no clock read at all. Allocation free; one thread.
 */
final class Spin {
    /** How long a wait spins before it yields between polls. */
    static final long SPIN_NS = 20_000;
    /** Empty polls between two clock reads (a power of two). */
    static final int CLOCK_EVERY = 64;

    private final long stallNs;
    private int polls;
    private boolean started;
    private long start;
    private boolean yielding;

    Spin(long stallNs) {
        this.stallNs = stallNs;
    }

    /** Starts a wait (or starts it again after progress). */
    Spin begin() {
        polls = 0;
        started = false;
        yielding = false;
        return this;
    }

    /** Empty polls since {@link #begin()}. */
    int polls() {
        return polls;
    }

    /**
     * After an empty poll: spins or yields; true once the wait has lasted longer than the stall limit
     * (measured from its {@value #CLOCK_EVERY}th poll, when the clock was first read).
     */
    boolean idle() {
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
        yielding = waited >= SPIN_NS;
        pause();
        return waited > stallNs;
    }

    private void pause() {
        if (yielding) {
            Thread.yield();
        } else {
            Thread.onSpinWait();
        }
    }
}
