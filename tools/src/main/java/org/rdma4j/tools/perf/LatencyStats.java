// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.util.Arrays;

/**
 * perftest's latency summary ({@code print_report_lat}) computed from the post timestamps, with its
 * exact arithmetic: the samples are the differences between successive posts ({@code iters - 1} of
 * them), divided by the round-trip factor (2 for WRITE and SEND, whose samples are round trips, 1 for
 * READ and ATOMIC); sorted; the two largest dropped from the count {@code m}; then
 * <ul>
 * <li>t_min = the smallest, t_max = {@code sorted[m]} (the larger dropped sample's neighbour: the
 *     second largest of all, as perftest prints it);</li>
 * <li>t_typical = the median of the first {@code m} (integer mean of the middle two when m is even);</li>
 * <li>t_avg = their mean; t_stdev = sqrt of the mean of squared differences, each difference
 *     truncated to a whole microsecond first, as perftest's {@code int} arithmetic does;</li>
 * <li>99% and 99.9% = {@code sorted[ceil(m * 0.99)]} and {@code sorted[ceil(m * 0.999)]}.</li>
 * </ul>
 * Timestamps are {@link System#nanoTime()} values: perftest's cycle counter at a fixed 1000 cycles
 * per microsecond. Immutable once built.
 *
 * <p>Every output of a run (the table, --json, --plot) takes its numbers from here, so they agree:
 * t_max and every percentile are {@link #percentile(double)} (perftest's rule above, which t_max is
 * the q = 1 case of), over the same sorted samples; {@link #SAMPLE_RULE} says which samples.
 */
final class LatencyStats {
    /** perftest's LAT_MEASURE_TAIL: the largest samples left out. */
    static final int MEASURE_TAIL = 2;
    /** nanoTime ticks per microsecond (perftest's cycles_to_units, get_cpu_mhz()). */
    static final double TICKS_PER_US = 1000.0;

    final long size;
    final long iters;
    final double tMin;
    final double tMax;
    final double tTypical;
    final double tAvg;
    final double tStdev;
    final double p99;
    final double p999;
    /** Unsorted samples in microseconds (all iters - 1 of them), for -U. */
    final double[] unsortedUs;
    /** Sorted samples in microseconds, without the dropped tail, for -H, plots and histograms. */
    final double[] sortedUs;
    /** The m kept samples and the next larger one (t_max), sorted: what {@link #percentile} ranks. */
    private final double[] rankedUs;

    /** Which samples the statistics describe, for the outputs to say. */
    static final String SAMPLE_RULE = "the intervals between successive posts (iterations - 1) without the "
            + MEASURE_TAIL + " largest, as perftest counts them; t_max and percentile q are sorted[ceil(samples * q)] "
            + "(perftest's rule, so t_max is the larger of the two left out)";

    private LatencyStats(long size, long iters, double tMin, double tMax, double tTypical, double tAvg,
                         double tStdev, double p99, double p999, double[] unsortedUs, double[] sortedUs,
                         double[] rankedUs) {
        this.size = size;
        this.iters = iters;
        this.tMin = tMin;
        this.tMax = tMax;
        this.tTypical = tTypical;
        this.tAvg = tAvg;
        this.tStdev = tStdev;
        this.p99 = p99;
        this.p999 = p999;
        this.unsortedUs = unsortedUs;
        this.sortedUs = sortedUs;
        this.rankedUs = rankedUs;
    }

    /** The number of samples the statistics describe: {@code iters - 1 - MEASURE_TAIL}. */
    int samples() {
        return sortedUs.length;
    }

    /**
     * Percentile {@code q} (0..1) as perftest takes its 99% and 99.9%: {@code sorted[ceil(samples * q)]};
     * {@code percentile(1)} is t_max, {@code percentile(0)} t_min.
     */
    double percentile(double q) {
        int i = (int) Math.ceil(sortedUs.length * q);
        return rankedUs[Math.clamp(i, 0, rankedUs.length - 1)];
    }

    /**
     * @param tposted post timestamps in ns, at least {@code iters} of them ({@code iters >= 5})
     * @param rttFactor 2 for WRITE and SEND, 1 for READ and ATOMIC
     */
    static LatencyStats of(long size, int iters, long[] tposted, int rttFactor) {
        int measureCnt = iters - 1;
        if (measureCnt < MEASURE_TAIL + 1) {
            throw new IllegalArgumentException("need at least " + (MEASURE_TAIL + 2) + " iterations, got " + iters);
        }
        long[] delta = new long[measureCnt];
        for (int i = 0; i < measureCnt; i++) {
            delta[i] = tposted[i + 1] - tposted[i];
        }
        double q = TICKS_PER_US * rttFactor;
        double[] unsorted = new double[measureCnt];
        for (int i = 0; i < measureCnt; i++) {
            unsorted[i] = delta[i] / q;
        }
        Arrays.sort(delta);
        int m = measureCnt - MEASURE_TAIL;
        long median = (m - 1) % 2 != 0 ? (delta[m / 2] + delta[m / 2 - 1]) / 2 : delta[m / 2];
        double averageSum = 0;
        for (int i = 0; i < m; i++) {
            averageSum += delta[i] / q;
        }
        double average = averageSum / m;
        double stdevSum = 0;
        for (int i = 0; i < m; i++) {
            int tempVar = (int) (average - delta[i] / q);
            int powVar = (int) Math.pow(tempVar, 2);
            stdevSum += powVar;
        }
        int i99 = (int) Math.ceil(m * 0.99);
        int i999 = (int) Math.ceil(m * 0.999);
        double[] ranked = new double[m + 1];
        for (int i = 0; i <= m; i++) {
            ranked[i] = delta[i] / q;
        }
        return new LatencyStats(size, iters, delta[0] / q, delta[m] / q, median / q, average,
                Math.sqrt(stdevSum / m), delta[i99] / q, delta[i999] / q, unsorted, Arrays.copyOf(ranked, m), ranked);
    }

    /**
     * print_report_lat_duration: the mean of a -D run, {@code ((ticks / 1000) / rtt) / iters} us, and
     * transactions per second {@code iters / (ticks / 1e9)}.
     *
     * @return {t_avg[usec], tps}
     */
    static double[] duration(long iters, long sampleTicks, int rttFactor) {
        double latency = ((sampleTicks / TICKS_PER_US) / rttFactor) / iters;
        double tps = iters / (sampleTicks / (TICKS_PER_US * 1000000));
        return new double[] {latency, tps};
    }
}
