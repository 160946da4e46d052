// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.plot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.SequencedMap;
import java.util.SplittableRandom;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChartsTest {

    @TempDir
    Path dir;

    @Test
    void latencyWritesAPngWithAHistogramAndACdf() throws IOException {
        SplittableRandom random = new SplittableRandom(1);
        double[] samples = new double[5000];
        for (int i = 0; i < samples.length; i++) {
            samples[i] = 1.0 + random.nextDouble() * random.nextDouble() * 4; // skewed, like latencies
        }
        samples[17] = 900; // one stall: the histogram must not collapse into one bin
        Path png = dir.resolve("latency.png");
        Charts.latency(png, "round trip", samples);
        assertDrawn(png);
    }

    @Test
    void latencyOfOneRepeatedValueStillDraws() throws IOException {
        Path png = dir.resolve("flat.png");
        Charts.latency(png, "one value", new double[] {2.5, 2.5, 2.5});
        assertDrawn(png);
    }

    @Test
    void linesOnLogLogAxesSkipPointsTheyCannotShow() throws IOException {
        SequencedMap<String, double[][]> series = new LinkedHashMap<>();
        double[] xs = {4096, 8192, 16384, 32768, 65536};
        series.put("reg", new double[][] {xs, {1, 2, 4, 8, 16}});
        series.put("dereg", new double[][] {xs, {0, 0.5, 1, 2, 4}}); // 0 cannot sit on a log axis
        Path png = dir.resolve("sub/dir/lines.png"); // missing directories are created
        Charts.lines(png, "registration", "bytes", "µs", true, true, series);
        assertDrawn(png);
    }

    @Test
    void barsWritesAPngWithGroupedBars() throws IOException {
        SequencedMap<String, double[]> series = new LinkedHashMap<>();
        series.put("ours", new double[] {1.5, 20, 3, 2.2});
        series.put("seed", new double[] {15.7, 21.1, 14.3, 8.3});
        Path png = dir.resolve("bars.png");
        Charts.bars(png, "ping-pong", "µs", new String[] {"a", "b", "c", "d"}, series);
        assertDrawn(png);
    }

    @Test
    void barsSpanningOrdersOfMagnitudeStillDraw() throws IOException {
        SequencedMap<String, double[]> series = new LinkedHashMap<>();
        series.put("vm", new double[] {14049.8, 5777.6, 692.1, 443.3});
        series.put("seed", new double[] {15.7, 21.1, 14.3, 8.3});
        Path png = dir.resolve("logbars.png");
        Charts.bars(png, "ping-pong", "µs", new String[] {"a", "b", "c", "d"}, series);
        assertDrawn(png);
    }

    @Test
    void mismatchedInputIsRejectedBeforeAnythingIsWritten() {
        Path png = dir.resolve("bad.png");
        SequencedMap<String, double[]> bars = new LinkedHashMap<>();
        bars.put("ours", new double[] {1});
        assertThrows(IllegalArgumentException.class,
                () -> Charts.bars(png, "t", "y", new String[] {"a", "b"}, bars));
        SequencedMap<String, double[][]> lines = new LinkedHashMap<>();
        lines.put("s", new double[][] {{1, 2}, {1}});
        assertThrows(IllegalArgumentException.class, () -> Charts.lines(png, "t", "x", "y", false, false, lines));
        assertThrows(IllegalArgumentException.class, () -> Charts.latency(png, "t", new double[0]));
        assertTrue(Files.notExists(png));
    }

    /** A readable PNG of the promised size that shows more than its background: something was drawn. */
    static void assertDrawn(Path png) throws IOException {
        BufferedImage image = ImageIO.read(png.toFile());
        assertTrue(image != null, png + " is not an image ImageIO can read");
        assertEquals(Charts.WIDTH, image.getWidth());
        assertEquals(Charts.HEIGHT, image.getHeight());
        int background = image.getRGB(0, 0);
        int colored = 0;
        int differing = 0;
        for (int y = 0; y < image.getHeight(); y += 2) {
            for (int x = 0; x < image.getWidth(); x += 2) {
                int rgb = image.getRGB(x, y);
                if (rgb != background) {
                    differing++;
                }
                int r = (rgb >> 16) & 0xff;
                int g = (rgb >> 8) & 0xff;
                int b = rgb & 0xff;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 60) {
                    colored++; // the data is drawn in color, axes and text in gray
                }
            }
        }
        int samples = (image.getWidth() / 2) * (image.getHeight() / 2);
        assertTrue(differing > samples / 100, "almost blank: " + differing + " of " + samples + " differ");
        assertTrue(colored > 200, "no data drawn: " + colored + " colored pixels");
    }
}
