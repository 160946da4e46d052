// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * Threads that each make one blocking call, for tests of what wakes them: wait until all are parked
 * inside the call, act, then check how each call ended. Every wait is bounded; {@link #close()}
 * interrupts stragglers.
 */
final class Waiters implements AutoCloseable {
    /** The blocking call a waiter makes. */
    interface Call {
        Object call() throws Exception;
    }

    private final Thread[] threads;
    private final Object[] values;
    private final Throwable[] errors;
    private final CountDownLatch done;

    private Waiters(int n, Call call) {
        threads = new Thread[n];
        values = new Object[n];
        errors = new Throwable[n];
        done = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            int k = i;
            threads[i] = Thread.ofPlatform().daemon().name("waiter-" + i).unstarted(() -> {
                try {
                    values[k] = call.call();
                } catch (Throwable t) {
                    errors[k] = t;
                } finally {
                    done.countDown();
                }
            });
        }
    }

    /** Starts {@code n} threads making {@code call} and returns once all are waiting inside it. */
    static Waiters start(int n, Call call) {
        Waiters w = new Waiters(n, call);
        for (Thread t : w.threads) {
            t.start();
        }
        w.awaitAllBlocked();
        return w;
    }

    /** How long a waiter of a {@link Capability#WAITS_IN_NATIVE_CODE} setup must stay in its call to count as waiting. */
    static final long NATIVE_SETTLE_MS = 300;

    /** Set by the suite for a setup with {@link Capability#WAITS_IN_NATIVE_CODE}. */
    static volatile boolean nativeWaits;

    private void awaitAllBlocked() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AbstractVerbsTest.TIMEOUT_MS);
        long settled = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(NATIVE_SETTLE_MS);
        for (Thread t : threads) {
            while (true) {
                Thread.State s = t.getState();
                if (s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING) {
                    break;
                }
                if (nativeWaits && s == Thread.State.RUNNABLE && System.nanoTime() - settled > 0) {
                    break; // still inside its call after the settle time: in poll(2)
                }
                if (s == Thread.State.TERMINATED) {
                    fail(t.getName() + " returned instead of waiting: " + outcome(index(t)));
                }
                if (System.nanoTime() - deadline > 0) {
                    fail(t.getName() + " is not waiting (" + s + ")");
                }
                Thread.yield();
            }
        }
    }

    private int index(Thread t) {
        for (int i = 0; i < threads.length; i++) {
            if (threads[i] == t) {
                return i;
            }
        }
        throw new IllegalArgumentException();
    }

    /** True when every call returned within {@code timeoutMs}. */
    boolean awaitDone(long timeoutMs) throws InterruptedException {
        return done.await(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** How many calls have returned (or thrown) so far. */
    int finished() {
        return threads.length - (int) done.getCount();
    }

    /** Every call must return within the timeout, each by throwing VerbsException with {@code errno}. */
    void assertAllFailWith(int errno, String why) throws InterruptedException {
        assertTrue(awaitDone(AbstractVerbsTest.TIMEOUT_MS), () -> finished() + " of " + threads.length
                + " waiters returned within " + AbstractVerbsTest.TIMEOUT_MS + " ms: " + why);
        for (int i = 0; i < threads.length; i++) {
            int k = i;
            VerbsException e = assertInstanceOf(VerbsException.class, errors[i], () -> "waiter " + k + ": " + outcome(k));
            assertEquals(Errno.name(errno), Errno.name(e.errno()), e::getMessage);
        }
    }

    /** What waiter {@code i}'s call returned; fails if it threw. */
    Object value(int i) {
        if (errors[i] != null) {
            throw new AssertionError("waiter " + i + " failed", errors[i]);
        }
        return values[i];
    }

    private String outcome(int i) {
        return errors[i] != null ? "threw " + errors[i] : "returned " + values[i];
    }

    @Override
    public void close() throws InterruptedException {
        for (Thread t : threads) {
            t.interrupt();
        }
        for (Thread t : threads) {
            t.join(AbstractVerbsTest.TIMEOUT_MS);
        }
    }
}
