// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rdma4j.tools.plot.PercentileChart;

/** The table, --json and --plot of one latency run give the same numbers for the same statistics. */
class PerfOutputsAgreeTest {
    @TempDir
    Path dir;

    /** A tail like a loaded machine's: most samples near 10 us, a few 100 times slower. */
    static LatencyStats longTail() {
        int iters = 20000;
        long[] t = new long[iters];
        java.util.SplittableRandom r = new java.util.SplittableRandom(7);
        for (int i = 1; i < iters; i++) {
            long d = 20_000 + r.nextInt(2000);
            if (r.nextInt(200) == 0) {
                d = 200_000 + r.nextInt(2_000_000);
            }
            t[i] = t[i - 1] + d;
        }
        return LatencyStats.of(2, iters, t, 2);
    }

    private static double json(String json, String field) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(field) + "\": ([\\d.]+)").matcher(json);
        assertTrue(m.find(), field + " in " + json);
        return Double.parseDouble(m.group(1));
    }

    @Test
    void tableJsonAndPlotShowTheSamePercentilesFromTheSameSamples() throws IOException {
        LatencyStats s = longTail();
        assertEquals(19997, s.samples(), "20000 iterations: 19999 intervals, the 2 largest dropped");
        assertEquals(s.p99, s.percentile(0.99));
        assertEquals(s.p999, s.percentile(0.999));
        assertEquals(s.tMax, s.percentile(1));
        assertEquals(s.tMin, s.percentile(0));

        PerfParams p = PerfArgs.params("write_lat", "-n", "20000");
        PerfRun run = new PerfRun(p, null, null);
        run.deviceName = "soft0";
        run.linkLayerName = "Ethernet";
        run.latResults.add(s);
        String table = Tables.latLine(s);
        String[] cols = table.strip().split("\\s+");
        String j = JsonReport.render(p, run);
        assertEquals(Double.parseDouble(cols[7]), json(j, "percentile_99"), j);
        assertEquals(Double.parseDouble(cols[7]), json(j, "p99"), j);
        assertEquals(Double.parseDouble(cols[8]), json(j, "percentile_99.9"), j);
        assertEquals(Double.parseDouble(cols[8]), json(j, "p99.9"), j);
        assertEquals(Double.parseDouble(cols[3]), json(j, "t_max"), j);
        assertEquals(Double.parseDouble(cols[3]), json(j, "max"), j);
        assertEquals(19997, json(j, "samples"), j);
        assertTrue(Tables.latSamplesNote(s).contains("19997 samples of 20000 iterations"), Tables.latSamplesNote(s));

        java.util.List<PercentileChart.Mark> marks = Plots.marks(s);
        assertEquals(java.util.List.of(s.tTypical, s.p99, s.p999, s.tMax),
                marks.stream().map(PercentileChart.Mark::us).toList(), "the plot marks the table's values");
        for (PercentileChart.Mark m : marks.subList(1, 4)) {
            assertEquals(s.percentile(m.q()), m.us(), "and its curve passes through them: " + m.label());
        }
        assertTrue(marks.get(3).label().contains(cols[3] + " µs"), "t_max printed as the table prints it: "
                + marks.get(3).label());
        assertTrue(Plots.sampleNote(s).startsWith("19997 samples of 20000 iterations"), Plots.sampleNote(s));
        Path png = dir.resolve("lat.png");
        p.plot = png;
        Plots.write(png, p, run);
        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(1000, img.getWidth());
    }
}
