// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A peer that repeats a bad message at line rate gets one log line per interval, with the count. */
class LogRateLimitTest {
    @Test
    void theFirstOccurrenceWritesALineAndABurstAfterItWritesNoneWithinTheInterval() {
        LogRateLimit limit = new LogRateLimit(TimeUnit.HOURS.toNanos(1));
        assertEquals(1, limit.admit(), "the first one is told at once");
        for (int i = 0; i < 10_000; i++) {
            assertEquals(0, limit.admit());
        }
    }

    @Test
    void onceTheIntervalIsOverTheNextLineCountsEveryOccurrenceSinceTheLastOne() {
        long[] now = {1_000};
        LogRateLimit limit = new LogRateLimit(100, () -> now[0]);
        assertEquals(1, limit.admit());
        for (int i = 0; i < 4; i++) {
            assertEquals(0, limit.admit(), "within the interval");
        }
        now[0] += 99;
        assertEquals(0, limit.admit(), "1 ns before the interval ends");
        now[0] += 1;
        assertEquals(6, limit.admit(), "the 4, the one just before, and this one");
        assertEquals(0, limit.admit());
    }
}
