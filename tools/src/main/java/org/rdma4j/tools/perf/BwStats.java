// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

/**
 * perftest's bandwidth summary ({@code print_report_bw}) with its arithmetic, on timestamps in ns
 * (perftest's cycles at 10^9 per second):
 * <ul>
 * <li>average = bytes of all messages / (last completion - first post), in MB/s with MB = 2^20 bytes,
 *     or with --report_gbits in Gb/s with Gb = 10^9 bits (125,000,000 bytes);</li>
 * <li>message rate = messages / the same time, in millions per second;</li>
 * <li>peak: the shortest time per message over every run of messages from a post i to a signaled
 *     completion j ({@code (tcompleted[j] - tposted[i]) / (j - i + 1)}, integer ns), reported as
 *     {@code size * 10^9 / (that * factor)}; 0 with -N (and past 20000 iterations, where perftest
 *     turns it off).</li>
 * </ul>
 * Stateless.
 */
final class BwStats {
    static final double TICKS_PER_S = 1e9;
    static final long MIB = 0x100000;
    static final long GBIT_BYTES = 125000000;

    private BwStats() {}

    /**
     * @param tposted post times (ns, from 1): index 0 always; every index when peak is computed
     * @param tcompleted completion times (ns, from 1; 0 = not recorded): index n-1 (or 0 with noPeak)
     * @param n messages counted (iters * QPs; a duration run's sample count)
     * @param cqMod completions are signaled every cqMod messages
     * @param postList messages per post
     */
    static BwReport report(long size, long[] tposted, long[] tcompleted, long n, int cqMod, int postList,
                           boolean noPeak, boolean gbits) {
        long optDelta = tcompleted[0] != 0 ? tcompleted[0] - tposted[0] : Long.MAX_VALUE;
        if (!noPeak) {
            for (long i = 0; i < n; i += postList) {
                for (long j = roundUp(i + 1, cqMod) - 1; j < n; j += cqMod) {
                    long t = (tcompleted[(int) j] - tposted[(int) i]) / (j - i + 1);
                    if (t < optDelta) {
                        optDelta = t;
                    }
                }
                if (n % cqMod != 0) {
                    long j = n - 1;
                    long t = (tcompleted[(int) j] - tposted[(int) i]) / (j - i + 1);
                    if (t < optDelta) {
                        optDelta = t;
                    }
                }
            }
        }
        long formatFactor = gbits ? GBIT_BYTES : MIB;
        int location = noPeak ? 0 : (int) (n - 1);
        double sumOfTestTicks = tcompleted[location] - tposted[0];
        double bwAvg = ((double) size * n * TICKS_PER_S) / (sumOfTestTicks * formatFactor);
        double msgRate = ((double) n * TICKS_PER_S) / (sumOfTestTicks * 1000000);
        long peakUp = noPeak ? 0 : size * (long) TICKS_PER_S;
        long peakDown = optDelta * formatFactor;
        double bwPeak = (double) peakUp / peakDown;
        return new BwReport(size, n, bwPeak, bwAvg, msgRate);
    }

    static long roundUp(long value, long alignment) {
        return value % alignment == 0 ? value : alignment * (value / alignment + 1);
    }
}
