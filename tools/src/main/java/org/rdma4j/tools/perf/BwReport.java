// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

/**
 * One bandwidth result line (perftest's {@code struct bw_report_data} without the per-port fields).
 *
 * @param size message size in bytes
 * @param iters messages counted
 * @param bwPeak peak bandwidth, MiB/s or Gb/s
 * @param bwAvg average bandwidth, MiB/s or Gb/s
 * @param msgRateAvg average message rate, Mpps
 */
record BwReport(long size, long iters, double bwPeak, double bwAvg, double msgRateAvg) {
    /** The sum of two sides' results (bidirectional runs print it). */
    BwReport plus(BwReport o) {
        return new BwReport(size, iters, bwPeak + o.bwPeak, bwAvg + o.bwAvg, msgRateAvg + o.msgRateAvg);
    }
}
