// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.SequencedMap;
import org.rdma4j.tools.plot.Charts;

/**
 * --plot: a latency histogram and CDF of the samples (latency tests), or bandwidth against message
 * size in FILE.png and message rate in FILE-msgrate.png (bandwidth tests; most useful with -a).
 * Stateless.
 */
final class Plots {
    private Plots() {}

    /** Where the message-rate chart of a bandwidth test goes: FILE.png -> FILE-msgrate.png. */
    static Path msgRatePath(Path png) {
        String name = png.getFileName().toString();
        int dot = name.toLowerCase(java.util.Locale.ROOT).endsWith(".png") ? name.length() - 4 : name.length();
        return png.resolveSibling(name.substring(0, dot) + "-msgrate.png");
    }

    static void write(Path png, PerfParams p, PerfRun run) throws IOException {
        String title = "rdma4j perf " + p.test.command() + " (" + run.deviceName + ", " + p.connection + ")";
        if (!p.isBw()) {
            if (run.latResults.isEmpty()) {
                throw new IOException("no latency samples to plot (a -D run keeps none)");
            }
            LatencyStats s = run.latResults.get(run.latResults.size() - 1);
            Charts.latency(png, title + ", " + s.size + " B", s.sortedUs);
            return;
        }
        int n = run.bwResults.size();
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
