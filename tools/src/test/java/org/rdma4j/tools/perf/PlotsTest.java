// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What --plot draws: readable with a long tail, every size of an -a run, a labelled single bandwidth. */
class PlotsTest {
    private static final int BLUE = 0x1f77b4;

    @TempDir
    Path dir;

    private static PerfRun run(String test, String... args) {
        PerfParams p = PerfArgs.params(test, args);
        PerfRun run = new PerfRun(p, null, null);
        run.deviceName = "soft0";
        return run;
    }

    /** Columns of the image with at least one pixel of {@code rgb}. */
    private static int columnsWith(BufferedImage img, int rgb) {
        int n = 0;
        for (int x = 0; x < img.getWidth(); x++) {
            for (int y = 0; y < img.getHeight(); y++) {
                if ((img.getRGB(x, y) & 0xffffff) == rgb) {
                    n++;
                    break;
                }
            }
        }
        return n;
    }

    private static int pixelsOf(BufferedImage img, int rgb) {
        int n = 0;
        for (int x = 0; x < img.getWidth(); x++) {
            for (int y = 0; y < img.getHeight(); y++) {
                n += (img.getRGB(x, y) & 0xffffff) == rgb ? 1 : 0;
            }
        }
        return n;
    }

    @Test
    void aLongTailDoesNotSquashTheBodyIntoOneBin() throws IOException {
        PerfRun run = run("write_lat", "-n", "20000");
        run.latResults.add(PerfOutputsAgreeTest.longTail());
        Path png = dir.resolve("lat.png");
        Plots.write(png, PerfArgs.params("write_lat"), run);
        BufferedImage img = ImageIO.read(png.toFile());
        // the curve runs across the plot; a histogram with the body in its first bin would fill a few columns
        assertTrue(columnsWith(img, BLUE) > 700, "columns with the curve: " + columnsWith(img, BLUE));
    }

    @Test
    void allSizesPlotEverySizeNotJustTheLast() {
        PerfRun run = run("write_lat", "-a");
        long[] t = new long[10];
        for (int i = 1; i < t.length; i++) {
            t[i] = t[i - 1] + 1000L * i;
        }
        for (int k = 1; k <= 23; k++) {
            run.latResults.add(LatencyStats.of(1L << k, 10, t, 2));
        }
        var series = Plots.latencyBySize(run);
        assertEquals(6, series.size());
        for (var e : series.entrySet()) {
            assertEquals(23, e.getValue()[0].length, e.getKey());
            assertEquals(8388608.0, e.getValue()[0][22], e.getKey());
        }
    }

    @Test
    void oneBandwidthIsLabelledBarsNotALoneDot() throws IOException {
        PerfRun run = run("write_bw");
        run.bwResults.add(new BwReport(65536, 5000, 8217.2, 676.54, 0.010824));
        Path png = dir.resolve("bw.png");
        Plots.write(png, PerfArgs.params("write_bw"), run);
        BufferedImage img = ImageIO.read(png.toFile());
        assertTrue(pixelsOf(img, BLUE) > 20_000, "a bar, not a dot: " + pixelsOf(img, BLUE));
        BufferedImage rate = ImageIO.read(Plots.msgRatePath(png).toFile());
        assertTrue(pixelsOf(rate, BLUE) > 20_000, "a bar, not a dot: " + pixelsOf(rate, BLUE));
    }
}
