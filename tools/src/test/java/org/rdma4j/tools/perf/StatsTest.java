// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * perftest's report arithmetic on synthetic timestamps, against values worked out by hand from its
 * print_report_lat and print_report_bw (ns timestamps, 1000 ticks per microsecond, 10^9 per second).
 */
class StatsTest {
    @Test
    void latencyHalvesRoundTripsDropsTheTwoLargestAndAveragesTheMiddleTwo() {
        // deltas 2000 4000 1000 4000 2000 10000 ns; sorted 1000 2000 2000 4000 | 4000 10000; m = 4
        long[] t = {0, 2000, 6000, 7000, 11000, 13000, 23000};
        LatencyStats s = LatencyStats.of(2, 7, t, 2);
        assertEquals(0.5, s.tMin);
        assertEquals(2.0, s.tMax, "sorted[m]: the second largest of all");
        assertEquals(1.0, s.tTypical, "(sorted[2] + sorted[1]) / 2 = 2000 ns, halved");
        assertEquals(1.125, s.tAvg, "(0.5 + 1 + 1 + 2) / 4");
        assertEquals(0.0, s.tStdev, "every difference truncates to 0 us");
        assertEquals(2.0, s.p99, "sorted[ceil(4 * 0.99) = 4]");
        assertEquals(2.0, s.p999);
        assertArrayEquals(new double[] {1, 2, 0.5, 2, 1, 5}, s.unsortedUs);
        assertArrayEquals(new double[] {0.5, 1, 1, 2}, s.sortedUs);
    }

    @Test
    void latencyStdevUsesPerftestsIntegerDifferences() {
        // READ: no halving. deltas 1000 3000 2000 10000 3000 80000; sorted 1 2 3 3 | 10 80 us
        long[] t = {0, 1000, 4000, 6000, 16000, 19000, 99000};
        LatencyStats s = LatencyStats.of(8, 7, t, 1);
        assertEquals(1.0, s.tMin);
        assertEquals(10.0, s.tMax);
        assertEquals(2.5, s.tTypical);
        assertEquals(2.25, s.tAvg);
        // (int)(2.25 - 1) = 1, (int)(-0.25..-0.75) = 0: sqrt(1 / 4)
        assertEquals(0.5, s.tStdev);
        assertEquals(10.0, s.p99);
    }

    @Test
    void latencyMedianOfAnOddCountIsTheMiddleSample() {
        // 7 deltas, m = 5: sorted 1 2 3 4 5 | 6 7 (us, READ)
        long[] t = {0, 5000, 7000, 13000, 14000, 17000, 24000, 28000};
        LatencyStats s = LatencyStats.of(2, 8, t, 1);
        assertEquals(3.0, s.tTypical);
        assertEquals(3.0, s.tAvg);
        // differences 2 1 0 -1 -2 -> squares 4 1 0 1 4 -> sqrt(10 / 5)
        assertEquals(Math.sqrt(2), s.tStdev, 1e-12);
        assertEquals(6.0, s.tMax);
        assertEquals(6.0, s.p99, "ceil(5 * 0.99) = 5");
    }

    @Test
    void latencyOfADurationRun() {
        // 2 s of samples, 1000 round trips of a WRITE test: 1000 us each, halved; 500 transactions/s
        double[] d = LatencyStats.duration(1000, 2_000_000_000L, 2);
        assertEquals(1000.0, d[0]);
        assertEquals(500.0, d[1]);
    }

    @Test
    void bandwidthAverageRateAndPeak() {
        // 4 messages of 1 KiB, completion signaled every 2: at 401 ns (after #2) and 1001 ns (after #4)
        long[] posted = {1, 51, 301, 351};
        long[] completed = {0, 401, 0, 1001};
        BwReport r = BwStats.report(1024, posted, completed, 4, 2, 1, false, false);
        assertEquals(4, r.iters());
        // 4096 bytes in 1000 ns: 4096e9 / (1000 * 2^20)
        assertEquals(3906.25, r.bwAvg(), 1e-9);
        assertEquals(4.0, r.msgRateAvg(), 1e-12);
        // best run: posts 0..1 completed at 401 -> (401 - 1) / 2 = 200 ns per message
        assertEquals(1024e9 / (200.0 * 1048576), r.bwPeak(), 1e-9);
        BwReport g = BwStats.report(1024, posted, completed, 4, 2, 1, false, true);
        assertEquals(32.768, g.bwAvg(), 1e-12);
        assertEquals(40.96, g.bwPeak(), 1e-12);
    }

    @Test
    void bandwidthWithoutPeakUsesTheFirstAndLastTimestamps() {
        long[] posted = {1};
        long[] completed = {2_000_001};
        BwReport r = BwStats.report(65536, posted, completed, 1000, 1, 1, true, false);
        assertEquals(0.0, r.bwPeak());
        assertEquals(65536.0 * 1000 * 1e9 / (2_000_000.0 * 1048576), r.bwAvg(), 1e-9);
        assertEquals(0.5, r.msgRateAvg(), 1e-12);
    }

    @Test
    void bandwidthWithATrailingPartialModerationWindow() {
        // 3 messages, cq_mod 2: signaled after #2 (index 1) and the last (index 2)
        long[] posted = {1, 11, 21};
        long[] completed = {0, 101, 131};
        BwReport r = BwStats.report(8, posted, completed, 3, 2, 1, false, false);
        // runs: i0: j1 (100/2 = 50), last j2 (130/3 = 43); i1: j1 90, j2 (120/2 = 60); i2: j2 110 -> 43
        assertEquals(8e9 / (43.0 * 1048576), r.bwPeak(), 1e-9);
    }
}
