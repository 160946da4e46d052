// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A run-to-completion task, as in rxe: whoever schedules it runs it, unless it is already running,
 * in which case the running thread runs it again before it goes idle. Never runs twice at once, so the
 * work it does needs no further locking. Thread safe.
 */
public final class Task {
    /** The work: returns true while it made progress and should be called again. */
    public interface Work {
        boolean doWork();
    }

    private static final int IDLE = 0;
    private static final int BUSY = 1;
    private static final int ARMED = 2;

    private final AtomicInteger state = new AtomicInteger(IDLE);
    /** The thread inside {@link #loop()}, or null; written only by that thread. */
    private Thread runner;
    /** Set by the running thread itself when it queued more work for itself (no CAS needed). */
    private boolean again;
    private final Work work;

    public Task(Work work) {
        this.work = work;
    }

    /** Runs the work now on this thread, or makes the thread running it go round again. */
    public void run() {
        for (;;) {
            int s = state.get();
            if (s == IDLE) {
                if (state.compareAndSet(IDLE, BUSY)) {
                    break;
                }
            } else if (s == BUSY) {
                if (state.compareAndSet(BUSY, ARMED)) {
                    return;
                }
            } else {
                return;
            }
        }
        loop();
    }

    /**
     * Takes the task if it is idle, for a caller that has one piece of work to do inside it first
     * (a delivering thread handing over a packet without queueing it); true when taken, and then the
     * caller must call {@link #runAcquired()}, which runs the pending work and releases the task.
     */
    public boolean tryAcquire() {
        return state.get() == IDLE && state.compareAndSet(IDLE, BUSY);
    }

    /** Runs the work and releases the task, after {@link #tryAcquire()} returned true. */
    public void runAcquired() {
        loop();
    }

    /**
     * Releases the task after {@link #tryAcquire()} returned true and the caller's one piece of work
     * left nothing for a pass to do: idle again at once, unless someone scheduled the task meanwhile
     * (it is ARMED), then the work runs as {@link #runAcquired()} runs it.
     */
    public void releaseAcquired() {
        if (!state.compareAndSet(BUSY, IDLE)) {
            loop();
        }
    }

    /**
     * Waits until the task is idle, runs {@code action} exclusively (no work runs concurrently), then
     * the pending work. For control-path changes such as QP state transitions.
     */
    public void runExclusive(Runnable action) {
        int spins = 0;
        while (!state.compareAndSet(IDLE, BUSY)) {
            if (++spins > 100) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        }
        try {
            action.run();
        } finally {
            loop();
        }
    }

    private void loop() {
        Thread self = Thread.currentThread();
        runner = self;
        for (;;) {
            try {
                while (work.doWork()) {
                    // keep going while there is progress
                }
            } catch (RuntimeException | Error e) {
                again = false;
                runner = null;
                state.set(IDLE);
                throw e;
            }
            if (again) {
                again = false;
                continue;
            }
            runner = null;
            if (state.compareAndSet(BUSY, IDLE)) {
                return;
            }
            runner = self;
            state.set(BUSY); // was ARMED: someone scheduled more work while we ran
        }
    }

    /**
     * True when the calling thread is the one running the work (further up its stack). Exact for the
     * caller: only the running thread writes {@link #runner}, and another thread's stale view of it
     * never names the caller.
     */
    public boolean runningHere() {
        return runner == Thread.currentThread();
    }

    /** From the thread running the work ({@link #runningHere()}): go round once more before going idle. */
    public void again() {
        again = true;
    }
}
