// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * The result lines of a run as perftest's options shape them: the table (perftest's formats), with
 * {@code --cpu_util} a CPU_Util[%] column, with {@code --report-both} the two directions of a -b run in
 * tables of their own after the sum, and with {@code --output} only the number asked for, one line per
 * result ({@code %lf}: six decimals). Writes to the run's real output; the banner and the rest go to a
 * writer that {@code --output} silences ({@link #quiet}). One thread.
 */
final class ResultLines {
    static final String RESULT_EXT_CPU_UTIL = "    CPU_Util[%]\n";

    private final PerfParams p;
    private final PrintWriter out;
    /** Where everything but the results goes: {@code out}, or nowhere with --output. */
    final PrintWriter quiet;

    ResultLines(PerfParams p, PrintWriter out) {
        this.p = p;
        this.out = out;
        this.quiet = p.output == null ? out : new PrintWriter(java.io.Writer.nullWriter());
    }

    private boolean cpu() {
        return p.cpuUtil && p.isDuration();
    }

    /** The column headers of a BW table. */
    void bwHeader() {
        quiet.print(Tables.RESULT_LINE);
        quiet.print(p.gbits ? Tables.RESULT_FMT_G : Tables.RESULT_FMT);
        quiet.print(cpu() ? RESULT_EXT_CPU_UTIL : Tables.RESULT_EXT);
    }

    /** The column headers of a latency table. */
    void latHeader() {
        quiet.print(Tables.RESULT_LINE);
        quiet.print(p.isDuration() ? Tables.RESULT_FMT_LAT_DUR : Tables.RESULT_FMT_LAT);
        quiet.print(cpu() ? RESULT_EXT_CPU_UTIL : Tables.RESULT_EXT);
    }

    /** One BW result; {@code cpuPercent} is shown with --cpu_util in a -D run. */
    void bw(BwReport r, double cpuPercent) {
        if (p.output == PerftestOptions.Output.BANDWIDTH) {
            out.print(Tables.fixed(r.bwAvg(), 6) + "\n");
        } else if (p.output == PerftestOptions.Output.MESSAGE_RATE) {
            out.print(Tables.fixed(r.msgRateAvg(), 6) + "\n");
        } else {
            out.print(withCpu(Tables.bwLine(r, p.gbits), cpuPercent));
        }
        out.flush();
    }

    /** --report-both: after the sum of a -b run, each direction in a table of its own. */
    void both(BwReport local, BwReport remote, double cpuPercent) {
        if (!p.reportBoth || p.output != null) {
            return;
        }
        out.print(Tables.RESULT_LINE);
        out.print("\n Local results: \n");
        bwHeader();
        bw(local, cpuPercent);
        out.print(Tables.RESULT_LINE);
        out.print("\n Remote results: \n");
        bwHeader();
        bw(remote, Double.NaN);
    }

    /** One latency result. */
    void lat(LatencyStats s) {
        if (p.output == PerftestOptions.Output.LATENCY) {
            out.print(Tables.fixed(s.tAvg, 6) + "\n");
        } else {
            out.print(Tables.latLine(s));
        }
        out.flush();
    }

    /** One latency result of a -D run. */
    void latDuration(long size, long iters, double avgUs, double tps, double cpuPercent) {
        if (p.output == PerftestOptions.Output.LATENCY) {
            out.print(Tables.fixed(avgUs, 6) + "\n");
        } else {
            out.print(withCpu(Tables.latDurationLine(size, iters, avgUs, tps), cpuPercent));
        }
        out.flush();
    }

    /** perftest's REPORT_EXT_CPU_UTIL ({@code "\t    %-3.2f\n"}) in place of the line's end, with --cpu_util in -D. */
    private String withCpu(String line, double cpuPercent) {
        if (!cpu() || Double.isNaN(cpuPercent)) {
            return line;
        }
        return line.substring(0, line.length() - Tables.RESULT_EXT.length())
                + String.format(Locale.ROOT, "\t    %s\n", Tables.f(cpuPercent, -3, 2));
    }
}
