// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rdma4j study latency}: runs end to end with few round trips (what is printed and drawn, never
 * how fast) in one JVM, on a named device and between two JVMs; bad options end with one line and exit
 * code 2.
 */
class StudyLatencyCommandTest {
    private static final String[] ALL = {"udp-busy", "udp-block", "send-busy", "send-events", "write-busy",
        "write-events"};

    @TempDir
    Path dir;

    @Test
    void latencyPrintsEveryMethodWithMonotonePercentilesBesideTheUdpFloor() {
        ToolRun run = ToolRun.of("study", "latency", "-n", "300", "--warmup", "30");
        assertEquals(0, run.exitCode(), run::toString);
        List<String[]> rows = rows(run);
        assertEquals(ALL.length, rows.size(), run::toString);
        for (int i = 0; i < ALL.length; i++) {
            assertEquals(ALL[i], rows.get(i)[0], run::toString);
        }
        assertEquals("1.00", rows.getFirst()[7], "udp-busy is the floor the ratios are taken to");
        assertTrue(run.out().contains("300 timed round trips per method after 30 warm-up"), run::toString);
    }

    @Test
    void latencyPlotIsADecodablePngOfTheChartSize() throws IOException {
        Path png = dir.resolve("sub/latency.png");
        ToolRun run = ToolRun.of("study", "latency", "-n", "500", "--warmup", "20", "-s", "64", "--methods",
                "write-busy,send-events", "--plot", png.toString());
        assertEquals(0, run.exitCode(), run::toString);
        List<String[]> rows = rows(run);
        assertEquals(List.of("udp-busy", "write-busy", "send-events"), rows.stream().map(r -> r[0]).toList(),
                "udp-busy is always measured (the floor), then the methods asked for in their order");
        assertTrue(run.out().contains("plot: " + png), run::toString);
        long bytes = Files.size(png);
        assertTrue(bytes > 20_000 && bytes < 2_000_000, "a chart of three curves, not " + bytes + " bytes");
        BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image, png + " does not decode as an image");
        assertEquals(1000, image.getWidth());
        assertEquals(700, image.getHeight());
        int background = image.getRGB(0, 0);
        int colored = 0;
        for (int y = 0; y < image.getHeight(); y += 2) {
            for (int x = 0; x < image.getWidth(); x += 2) {
                int rgb = image.getRGB(x, y);
                int r = (rgb >> 16) & 0xff;
                int g = (rgb >> 8) & 0xff;
                int b = rgb & 0xff;
                if (rgb != background && Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 80) {
                    colored++;
                }
            }
        }
        assertTrue(colored > 300, "the curves are drawn in colour: " + colored + " coloured pixels");
    }

    @Test
    void latencyOnANamedDeviceRunsBothQpsThere() {
        ToolRun run = ToolRun.of("study", "latency", "-d", "soft0", "-n", "200", "--warmup", "10", "--methods",
                "send-busy,write-events");
        assertEquals(0, run.exitCode(), run::toString);
        assertEquals(3, rows(run).size(), run::toString);
        assertTrue(run.out().contains("both QPs on soft0"), run::toString);
    }

    @Test
    void latencyBetweenTwoJvmsOverSharedMemory() {
        ToolRun run = ToolRun.of("study", "latency", "--link", "shm", "-n", "200", "--warmup", "20", "--methods",
                "udp-block,send-events,write-busy");
        assertEquals(0, run.exitCode(), run::toString);
        assertEquals(List.of("udp-busy", "udp-block", "send-events", "write-busy"),
                rows(run).stream().map(r -> r[0]).toList(), run::toString);
        assertTrue(run.out().contains("two JVMs") && run.out().contains("link=shm"), run::toString);
    }

    @Test
    void latencyBetweenTwoJvmsOverUdp() {
        ToolRun run = ToolRun.of("study", "latency", "--link", "udp", "-n", "200", "--warmup", "20", "--methods",
                "send-busy,write-events");
        assertEquals(0, run.exitCode(), run::toString);
        assertEquals(3, rows(run).size(), run::toString);
        assertTrue(run.out().contains("link=udp"), run::toString);
    }

    @Test
    void latencyBetweenTwoJvmsEndsWithOneLineWhenTheRdmaSetupFails() {
        ToolRun run = ToolRun.of("study", "latency", "--link", "udp", "-i", "2", "-n", "10", "--warmup", "0",
                "--methods", "send-busy");
        assertEquals(1, run.exitCode(), run::toString);
        List<String> lines = run.err().lines().toList();
        assertEquals(1, lines.size(), run::toString);
        assertTrue(lines.getFirst().startsWith("rdma4j study latency: ") && lines.getFirst().contains("port"),
                run::toString);
        assertFalse(run.out().contains("method "), "no table after a failed run\n" + run);
    }

    @Test
    void latencyBadOptionsEndWithOneLineAndExitCode2() {
        expect(2, "-n 0", "-n", "0");
        expect(2, "--warmup -1", "--warmup", "-1");
        expect(2, "-s 0", "-s", "0");
        expect(2, "-s 70000", "-s", "70000");
        expect(2, "'lots' is not a size", "-s", "lots");
        expect(2, "--methods: 'tcp-busy' is not one of udp-busy", "--methods", "tcp-busy");
        expect(2, "--link tcp: must be udp or shm", "--link", "tcp");
        expect(2, "no -d with it", "--link", "udp", "-d", "soft0");
        expect(2, "--plot x.jpg: the file name must end in .png", "--plot", "x.jpg");
        expect(2, "--serve is the echo side", "--serve");
        expect(2, "Unknown option: '--bogus'", "--bogus");
        expect(1, "no-such-dev", "-d", "no-such-dev", "-n", "1", "--warmup", "0", "--methods", "send-busy");
    }

    private static void expect(int code, String firstLine, String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "study";
        all[1] = "latency";
        System.arraycopy(args, 0, all, 2, args.length);
        ToolRun run = ToolRun.of(all);
        assertEquals(code, run.exitCode(), run::toString);
        String first = run.err().lines().findFirst().orElse("");
        assertTrue(first.contains(firstLine), () -> "the first line should say '" + firstLine + "'\n" + run);
        assertFalse(run.err().contains("\tat "), () -> "no stack trace\n" + run);
    }

    /** The table's rows (checked: 9 columns, numbers, percentiles that never fall). */
    private static List<String[]> rows(ToolRun run) {
        List<String> lines = run.out().lines().toList();
        int header = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("method ")) {
                header = i;
            }
        }
        assertTrue(header >= 0, "no table in\n" + run);
        assertEquals(List.of("method", "p50_us", "p90_us", "p99_us", "p99.9_us", "max_us", "mean_us", "p50/udp-busy",
                "retransmits"),
                List.of(lines.get(header).trim().split("\\s+")));
        List<String[]> rows = new ArrayList<>();
        for (int i = header + 1; i < lines.size() && !lines.get(i).isBlank(); i++) {
            String[] r = lines.get(i).trim().split("\\s+");
            assertEquals(9, r.length, lines.get(i));
            double previous = 0;
            for (int c = 1; c <= 5; c++) {
                double v = Double.parseDouble(r[c]);
                assertTrue(v > 0 && v >= previous, "percentiles p50..max rise: " + lines.get(i));
                previous = v;
            }
            assertTrue(Double.parseDouble(r[6]) > 0 && Double.parseDouble(r[7]) > 0, lines.get(i));
            boolean socket = r[0].startsWith("udp-");
            assertTrue(socket ? r[8].equals("-") : r[8].matches("[0-9]+"),
                    "a count of retransmissions for an RDMA method on the soft device, none for a socket: " + lines.get(i));
            rows.add(r);
        }
        return rows;
    }
}
