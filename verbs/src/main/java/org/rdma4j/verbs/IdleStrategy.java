// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.util.concurrent.locks.LockSupport;

/**
 * What a polling loop does between two polls that found nothing, in the way of Agrona's idle
 * strategies: spin, yield, or park. {@link #reset()} is called when work was found (or a new wait
 * begins), {@link #idle()} after each empty poll. None allocates. {@link #busySpin()},
 * {@link #yielding()} and {@link #sleeping(long)} keep no state and may be shared; a
 * {@link #backoff()} keeps per-wait state and belongs to one thread.
 */
public interface IdleStrategy {
    /** Called after a poll that found nothing. */
    void idle();

    /** Called when a wait begins or work was found. */
    default void reset() {
    }

    /** {@return a strategy that spins ({@link Thread#onSpinWait()}): lowest latency, one core busy; shared} */
    static IdleStrategy busySpin() {
        return BusySpin.INSTANCE;
    }

    /** {@return a strategy that calls {@link Thread#yield()} between polls; shared} */
    static IdleStrategy yielding() {
        return Yielding.INSTANCE;
    }

    /**
     * Parks for {@code parkNs} between polls: least CPU, latency of about the park time.
     *
     * @param parkNs the park time in nanoseconds, positive
     * @return a new stateless strategy
     * @throws IllegalArgumentException for a park time of 0 or less
     */
    static IdleStrategy sleeping(long parkNs) {
        if (parkNs <= 0) {
            throw new IllegalArgumentException("parkNs must be positive: " + parkNs);
        }
        return new Sleeping(parkNs);
    }

    /**
     * Spins 100 times, yields 10 times, then parks from 1 us doubling up to 1 ms: fast when
     * completions come quickly, cheap when they do not. A new instance per call (it has state).
     *
     * @return a new strategy for one thread
     */
    static IdleStrategy backoff() {
        return new Backoff(100, 10, 1_000, 1_000_000);
    }

    /**
     * A {@link #backoff()} with its own limits.
     *
     * @param maxSpins  spins before yielding, 0 or more
     * @param maxYields yields before parking, 0 or more
     * @param minParkNs the first park time in nanoseconds, positive
     * @param maxParkNs the longest park time in nanoseconds, at least {@code minParkNs}
     * @return a new strategy for one thread
     * @throws IllegalArgumentException for limits out of those ranges
     */
    static IdleStrategy backoff(int maxSpins, int maxYields, long minParkNs, long maxParkNs) {
        if (maxSpins < 0 || maxYields < 0 || minParkNs <= 0 || maxParkNs < minParkNs) {
            throw new IllegalArgumentException("backoff(" + maxSpins + ", " + maxYields + ", " + minParkNs + ", "
                    + maxParkNs + ")");
        }
        return new Backoff(maxSpins, maxYields, minParkNs, maxParkNs);
    }

    /** See {@link #busySpin()}. */
    final class BusySpin implements IdleStrategy {
        static final BusySpin INSTANCE = new BusySpin();

        private BusySpin() {}

        @Override
        public void idle() {
            Thread.onSpinWait();
        }

        @Override
        public String toString() {
            return "busySpin";
        }
    }

    /** See {@link #yielding()}. */
    final class Yielding implements IdleStrategy {
        static final Yielding INSTANCE = new Yielding();

        private Yielding() {}

        @Override
        public void idle() {
            Thread.yield();
        }

        @Override
        public String toString() {
            return "yielding";
        }
    }

    /** See {@link #sleeping(long)}. */
    final class Sleeping implements IdleStrategy {
        private final long parkNs;

        private Sleeping(long parkNs) {
            this.parkNs = parkNs;
        }

        @Override
        public void idle() {
            LockSupport.parkNanos(parkNs);
        }

        @Override
        public String toString() {
            return "sleeping(" + parkNs + " ns)";
        }
    }

    /** See {@link #backoff()}. Not thread safe. */
    final class Backoff implements IdleStrategy {
        private final int maxSpins;
        private final int maxYields;
        private final long minParkNs;
        private final long maxParkNs;
        private int spins;
        private int yields;
        private long parkNs;

        private Backoff(int maxSpins, int maxYields, long minParkNs, long maxParkNs) {
            this.maxSpins = maxSpins;
            this.maxYields = maxYields;
            this.minParkNs = minParkNs;
            this.maxParkNs = maxParkNs;
            reset();
        }

        @Override
        public void idle() {
            if (spins < maxSpins) {
                spins++;
                Thread.onSpinWait();
            } else if (yields < maxYields) {
                yields++;
                Thread.yield();
            } else {
                LockSupport.parkNanos(parkNs);
                parkNs = Math.min(parkNs << 1, maxParkNs);
            }
        }

        @Override
        public void reset() {
            spins = 0;
            yields = 0;
            parkNs = minParkNs;
        }

        /** The park time the next parking {@link #idle()} would use (for tests). */
        long nextParkNs() {
            return spins < maxSpins || yields < maxYields ? 0 : parkNs;
        }

        @Override
        public String toString() {
            return "backoff(" + maxSpins + ", " + maxYields + ", " + minParkNs + ", " + maxParkNs + ")";
        }
    }
}
