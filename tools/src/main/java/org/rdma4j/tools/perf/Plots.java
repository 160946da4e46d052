// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.SequencedMap;
import org.rdma4j.tools.plot.Charts;
import org.rdma4j.tools.plot.PercentileChart;

/**
 * --plot. Latency tests: the percentile curve of the samples (one size), or t_min, t_typical, t_avg,
 * the 99% and 99.9% percentiles and t_max against message size (-a); every number from
 * {@link LatencyStats}, so the plot shows the table's values. Bandwidth tests: bandwidth against message
 * size in FILE.png and message rate in FILE-msgrate.png (-a), or for one size labelled bars (a line
 * through one point would be a lone dot). Stateless.
 */
final class Plots {
    private Plots() {}

    /** Where the message-rate chart of a bandwidth test goes: FILE.png -> FILE-msgrate.png. */
    static Path msgRatePath(Path png) {
        String name = png.getFileName().toString();
        int dot = name.toLowerCase(java.util.Locale.ROOT).endsWith(".png") ? name.length() - 4 : name.length();
        return png.resolveSibling(name.substring(0, dot) + "-msgrate.png");
    }

    /** The plot's subtitle: which samples, and where the marked numbers come from. */
    static String sampleNote(LatencyStats s) {
        return s.samples() + " samples of " + s.iters + " iterations: the intervals between successive posts "
                + "without the " + LatencyStats.MEASURE_TAIL + " largest, as perftest counts them;\n"
                + "percentile q is sorted[ceil(samples * q)] (perftest's rule; t_max is q = 1). "
                + "The marked values are the table's.";
    }

    /** The statistics the percentile curve marks: the table's t_typical, 99%, 99.9% and t_max. */
    static List<PercentileChart.Mark> marks(LatencyStats s) {
        return List.of(mark("t_typical (median)", 0.5, s.tTypical), mark("99%", 0.99, s.p99),
                mark("99.9%", 0.999, s.p999), mark("t_max", 1, s.tMax));
    }

    private static PercentileChart.Mark mark(String name, double q, double us) {
        return new PercentileChart.Mark(name + " " + Tables.fixed(us, 2) + " µs", q, us); // the table's digits
    }

    /** -a: t_min .. t_max of every size against the size, one series each. */
    static SequencedMap<String, double[][]> latencyBySize(PerfRun run) {
        int n = run.latResults.size();
        double[] sizes = new double[n];
        double[][] ys = new double[6][n];
        for (int i = 0; i < n; i++) {
            LatencyStats s = run.latResults.get(i);
            sizes[i] = s.size;
            double[] v = {s.tMin, s.tTypical, s.tAvg, s.p99, s.p999, s.tMax};
            for (int k = 0; k < v.length; k++) {
                ys[k][i] = v[k];
            }
        }
        String[] names = {"t_min", "t_typical", "t_avg", "99% percentile", "99.9% percentile", "t_max"};
        SequencedMap<String, double[][]> series = new LinkedHashMap<>();
        for (int k = 0; k < names.length; k++) {
            series.put(names[k] + " [usec]", new double[][] {sizes, ys[k]});
        }
        return series;
    }

    private static void singleSizeBw(Path png, String title, PerfParams p, BwReport r) {
        String unit = p.gbits ? "Gb/s" : "MiB/s";
        String[] category = {r.size() + " B, " + r.iters() + " iterations"};
        SequencedMap<String, double[]> bw = new LinkedHashMap<>();
        if (r.bwPeak() > 0) {
            bw.put("BW peak [" + unit + "]", new double[] {r.bwPeak()});
        }
        bw.put("BW average [" + unit + "]", new double[] {r.bwAvg()});
        Charts.bars(png, title + ": bandwidth at one message size (-a plots it against size)", "bandwidth [" + unit
                + "]", category, bw, "0.00");
        SequencedMap<String, double[]> rate = new LinkedHashMap<>();
        rate.put("MsgRate [Mpps]", new double[] {r.msgRateAvg()});
        Charts.bars(msgRatePath(png), title + ": message rate at one message size", "MsgRate [Mpps]", category, rate,
                "0.000000"); // as the table prints it
    }

    static void write(Path png, PerfParams p, PerfRun run) throws IOException {
        String title = "rdma4j perf " + p.test.command() + " (" + run.deviceName + ", " + p.connection + ")";
        if (!p.isBw()) {
            if (run.latResults.isEmpty()) {
                throw new IOException("no latency samples to plot (a -D run keeps none)");
            }
            if (run.latResults.size() == 1) {
                LatencyStats s = run.latResults.getFirst();
                PercentileChart.write(png, title + ", " + s.size + " B", sampleNote(s), s.samples(), s::percentile,
                        marks(s));
            } else {
                Charts.lines(png, title + ": latency against message size (" + run.latResults.getFirst().samples()
                        + " samples per size, the table's numbers)", "message size [bytes]", "latency [usec]", true,
                        true, latencyBySize(run));
            }
            return;
        }
        int n = run.bwResults.size();
        if (n == 1) {
            singleSizeBw(png, title, p, run.bwResults.getFirst());
            return;
        }
        double[] sizes = new double[n];
        double[] bw = new double[n];
        double[] rate = new double[n];
        for (int i = 0; i < n; i++) {
            BwReport r = run.bwResults.get(i);
            sizes[i] = r.size();
            bw[i] = r.bwAvg();
            rate[i] = r.msgRateAvg();
        }
        String unit = p.gbits ? "Gb/s" : "MiB/s";
        SequencedMap<String, double[][]> bwSeries = new LinkedHashMap<>();
        bwSeries.put("BW average [" + unit + "]", new double[][] {sizes, bw});
        Charts.lines(png, title + ": bandwidth", "message size [bytes]", "BW average [" + unit + "]", true, true,
                bwSeries);
        SequencedMap<String, double[][]> rateSeries = new LinkedHashMap<>();
        rateSeries.put("MsgRate [Mpps]", new double[][] {sizes, rate});
        Charts.lines(msgRatePath(png), title + ": message rate", "message size [bytes]", "MsgRate [Mpps]", true, true,
                rateSeries);
    }
}
