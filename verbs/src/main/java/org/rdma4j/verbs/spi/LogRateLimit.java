// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * At most one log line per interval for an event that a peer (or a broken network) can repeat at line
 * rate: {@link #admit()} counts every occurrence and says, once per interval, how many there were since
 * the last line. Allocation free; lock free; thread safe.
 */
public final class LogRateLimit {
    private final long intervalNs;
    private final LongSupplier clock;
    private final AtomicLong since = new AtomicLong();
    /** When the next line may be written (System.nanoTime); the first occurrence always may. */
    private final AtomicLong nextNs;
    private volatile boolean started;

    /**
     * A limit of one line per {@code intervalNs}, on {@link System#nanoTime()}.
     *
     * @param intervalNs the least time between two lines, in nanoseconds
     */
    public LogRateLimit(long intervalNs) {
        this(intervalNs, System::nanoTime);
    }

    /** With another clock (tests). */
    LogRateLimit(long intervalNs, LongSupplier clock) {
        this.intervalNs = intervalNs;
        this.clock = clock;
        this.nextNs = new AtomicLong();
    }

    /**
     * Counts one occurrence and says whether a line is due.
     *
     * @return 0 when no line is due now, else the occurrences since the last line, this one included
     *     (the caller writes one line saying so)
     */
    public long admit() {
        since.incrementAndGet();
        long now = clock.getAsLong();
        long next = nextNs.get();
        if (started && now - next < 0) {
            return 0;
        }
        if (!nextNs.compareAndSet(next, now + intervalNs)) {
            return 0;
        }
        started = true;
        return since.getAndSet(0);
    }
}
