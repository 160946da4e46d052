// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Locale;

/**
 * perftest's result tables, character for character: the separator line, the column headers and the
 * printf formats of one result line (tabs included), plus C's {@code %g} for -H/-U listings.
 * Stateless.
 */
final class Tables {
    static final String RESULT_LINE =
            "---------------------------------------------------------------------------------------\n";
    static final String RESULT_FMT =
            " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]";
    static final String RESULT_FMT_G =
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";
    static final String RESULT_FMT_LAT = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
            + "t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";
    static final String RESULT_FMT_LAT_DUR = " #bytes        #iterations       t_avg[usec]    tps average";
    static final String RESULT_EXT = "\n";

    private Tables() {}

    /** One bandwidth line (REPORT_FMT, or REPORT_FMT_EXT when Gb/s and the average is below 0.1). */
    static String bwLine(BwReport r, boolean gbits) {
        boolean incAccuracy = r.bwAvg() < 0.1 && gbits;
        if (incAccuracy) {
            return String.format(Locale.ROOT, " %-7d    %d           %s            %s            %s",
                    r.size(), r.iters(), f(r.bwPeak(), -7, 6), f(r.bwAvg(), -7, 6), f(r.msgRateAvg(), -7, 6))
                    + RESULT_EXT;
        }
        return String.format(Locale.ROOT, " %-7d    %-10d       %s            %s\t\t   %s", r.size(), r.iters(),
                f(r.bwPeak(), -7, 2), f(r.bwAvg(), -7, 2), f(r.msgRateAvg(), -7, 6)) + RESULT_EXT;
    }

    /** One latency line (REPORT_FMT_LAT). */
    static String latLine(LatencyStats s) {
        return String.format(Locale.ROOT, " %-7d %d          %s        %s      %s  \t       %s     \t%s\t\t%s \t\t%s",
                s.size, s.iters, f(s.tMin, -7, 2), f(s.tMax, -7, 2), f(s.tTypical, -7, 2), f(s.tAvg, -7, 2),
                f(s.tStdev, -7, 2), f(s.p99, -7, 2), f(s.p999, -7, 2)) + RESULT_EXT;
    }

    /**
     * rdma4j's line under a latency table (perftest has none): which samples the statistics describe,
     * the same ones --json and --plot use.
     */
    static String latSamplesNote(LatencyStats s) {
        return " " + s.samples() + " samples of " + s.iters + " iterations: the intervals between posts without the "
                + LatencyStats.MEASURE_TAIL + " largest (perftest's count); percentile q = sorted[ceil(samples*q)]"
                + RESULT_EXT;
    }

    /** One latency line of a -D run (REPORT_FMT_LAT_DUR). */
    static String latDurationLine(long size, long iters, double avgUs, double tps) {
        return String.format(Locale.ROOT, " %-7d       %d            %s        %s", size, iters, f(avgUs, -7, 2),
                f(tps, -7, 2)) + RESULT_EXT;
    }

    /** printf's %W.Pf (negative width: left-aligned), with C's spelling of NaN and infinities. */
    static String f(double v, int width, int precision) {
        String body;
        if (Double.isNaN(v)) {
            body = "-nan";
        } else if (Double.isInfinite(v)) {
            body = v > 0 ? "inf" : "-inf";
        } else {
            body = fixed(v, precision);
        }
        int w = Math.abs(width);
        if (body.length() >= w) {
            return body;
        }
        String pad = " ".repeat(w - body.length());
        return width < 0 ? body + pad : pad + body;
    }

    /**
     * printf's %.Pf: the exact binary value rounded half-even, as glibc does (Java's %f rounds the
     * decimal shortcut half-up: 1.125 is "1.13" there and "1.12" in C).
     */
    static String fixed(double v, int precision) {
        String t = new BigDecimal(v).setScale(precision, RoundingMode.HALF_EVEN).toPlainString();
        if (v < 0 || (v == 0 && 1 / v < 0)) {
            if (!t.startsWith("-")) {
                t = "-" + t;
            }
        }
        return t;
    }

    /** C's {@code %g}: 6 significant digits, exponent form below 1e-4 or from 1e6, no trailing zeros. */
    static String g(double v) {
        if (Double.isNaN(v)) {
            return "-nan";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        if (v == 0) {
            return (1 / v < 0) ? "-0" : "0";
        }
        BigDecimal r = new BigDecimal(v).round(new MathContext(6, RoundingMode.HALF_EVEN));
        int exp = r.precision() - r.scale() - 1;
        if (exp < -4 || exp >= 6) {
            BigDecimal mant = r.movePointLeft(exp);
            String sign = exp < 0 ? "-" : "+";
            int a = Math.abs(exp);
            return stripZeros(mant.setScale(5, RoundingMode.HALF_EVEN).toPlainString()) + "e" + sign
                    + (a < 10 ? "0" : "") + a;
        }
        return stripZeros(r.setScale(Math.max(0, 5 - exp), RoundingMode.HALF_EVEN).toPlainString());
    }

    private static String stripZeros(String s) {
        if (s.indexOf('.') < 0) {
            return s;
        }
        int end = s.length();
        while (s.charAt(end - 1) == '0') {
            end--;
        }
        if (s.charAt(end - 1) == '.') {
            end--;
        }
        return s.substring(0, end);
    }
}
