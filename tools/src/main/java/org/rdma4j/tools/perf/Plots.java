package org.rdma4j.tools.perf;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.SequencedMap;
import org.rdma4j.tools.plot.Charts;

/**
 * --plot: a latency histogram and CDF of the samples (latency tests), or bandwidth and message rate
 * against message size (bandwidth tests; most useful with -a). Stateless.
 */
final class Plots {
    private Plots() {}

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
        SequencedMap<String, double[][]> series = new LinkedHashMap<>();
        series.put("BW average [" + (p.gbits ? "Gb/s" : "MiB/s") + "]", new double[][] {sizes, bw});
        series.put("MsgRate [Mpps]", new double[][] {sizes, rate});
        Charts.lines(png, title, "message size [bytes]", "BW / MsgRate", true, true, series);
    }
}
