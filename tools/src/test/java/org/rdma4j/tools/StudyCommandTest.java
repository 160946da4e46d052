// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rdma4j study}: both studies run end to end on the soft device (few iterations: these check
 * what is printed and drawn, never how fast), and bad flags end with a message and exit code 2.
 */
class StudyCommandTest {
    private static final Pattern NUMBER = Pattern.compile("-?[0-9]+(\\.[0-9]+)?");

    @TempDir
    Path dir;

    @Test
    void pingpongPrintsAParseableTableOfTheFourVariantsBesideTheSeedAndDrawsIt() throws IOException {
        Path png = dir.resolve("pp.png");
        ToolRun run = ToolRun.of("study", "pingpong", "-n", "200", "--warmup", "50", "--plot", png.toString());
        assertEquals(0, run.exitCode(), run::toString);
        List<String[]> rows = table(run.out(), "variant", 21);
        assertEquals(4, rows.size(), run::toString);
        String[][] seed = {{"send-recv-busy", "15.7", "100.0", "100.0", "1.00"},
            {"send-recv-events", "21.1", "18.0", "21.0", "1.34"},
            {"write-read-events", "14.3", "29.4", "0.0", "0.91"},
            {"unsig-write-read-events", "8.3", "30.8", "0.0", "0.53"}};
        for (int i = 0; i < 4; i++) {
            String[] r = rows.get(i);
            assertEquals(seed[i][0], r[0], run::toString);
            for (int c = 1; c < 21; c++) {
                if (c < 11 || c > 13) { // jvm_other% and the run-queue shares are "-" where the OS does not say
                    assertTrue(NUMBER.matcher(r[c]).matches(), "column " + c + " of " + String.join(" ", r));
                }
            }
            assertTrue(Double.parseDouble(r[1]) > 0, "a round trip takes time: " + String.join(" ", r));
            for (int c = 4; c <= 10; c++) {
                assertTrue(Double.parseDouble(r[c]) >= 0, "a CPU share is not negative: " + String.join(" ", r));
            }
            assertEquals(seed[i][1], r[17]);
            assertEquals(seed[i][2], r[18]);
            assertEquals(seed[i][3], r[19]);
            assertEquals(seed[i][4], r[20]);
        }
        assertEquals("1.00", rows.get(0)[16], "variant 1 is the ratios' base");
        assertEquals("0.00", rows.get(0)[14], "busy polling never blocks for an event");
        assertEquals("0.00", rows.get(0)[15], "busy polling never blocks for an event");
        assertEquals("0.00", rows.get(2)[15], "the passive server of variant 3 has nothing to wait for until the end");
        assertTrue(run.out().contains("round trip (mean), fastest first:"), run::toString);
        assertTrue(run.out().contains("round trip (median), fastest first:"), run::toString);
        assertTrue(run.out().contains("client CPU, least first:"), run::toString);
        assertTrue(run.out().contains("ThreadMXBean"), "the footnote says how CPU was measured");
        assertTrue(run.out().contains("soft1") || run.out().contains("server on "), run::toString);
        assertPng(png);
        assertPng(dir.resolve("pp-cpu.png"));
    }

    @Test
    void pingpongRunsChosenVariantsWithBothQpsOnOneDevice() {
        ToolRun run = ToolRun.of("study", "pingpong", "-d", "soft0", "-n", "50", "--warmup", "0", "-s", "3",
                "--variants", "4,send-recv-busy");
        assertEquals(0, run.exitCode(), run::toString);
        List<String[]> rows = table(run.out(), "variant", 21);
        assertEquals(2, rows.size(), run::toString);
        assertEquals("unsig-write-read-events", rows.get(0)[0]);
        assertEquals("send-recv-busy", rows.get(1)[0]);
        assertTrue(run.out().contains("both on soft0"), run::toString);
    }

    @Test
    void regcostPrintsOneRowPerPowerOfTwoAndDrawsThem() throws IOException {
        Path png = dir.resolve("reg.png");
        ToolRun run = ToolRun.of("study", "regcost", "-d", "soft0", "--max", "64K", "-n", "3", "--warmup", "10",
                "--plot", png.toString());
        assertEquals(0, run.exitCode(), run::toString);
        List<String[]> rows = table(run.out(), "device", 7);
        assertEquals(5, rows.size(), run::toString);
        long bytes = 4096;
        for (String[] r : rows) {
            assertEquals("soft0", r[0]);
            assertEquals("soft", r[1]);
            assertEquals(Long.toString(bytes), r[2]);
            for (int c = 4; c < 7; c++) {
                assertTrue(NUMBER.matcher(r[c]).matches() && Double.parseDouble(r[c]) >= 0, String.join(" ", r));
            }
            bytes *= 2;
        }
        assertTrue(run.out().contains("written before timing"), "the table says first-touch faults are excluded");
        assertPng(png);
    }

    @Test
    void pingpongWithExamplesRunsTheExampleProgramsThemselvesAndPrintsTheirFigures() {
        ToolRun run = ToolRun.of("study", "pingpong", "--examples", "-n", "300", "--warmup", "50", "--port", "27471");
        assertEquals(0, run.exitCode(), run::toString);
        assertTrue(run.out().contains("examples/, on rdma4j's connection manager"), run::toString);
        List<String[]> rows = table(run.out(), "variant", 13);
        assertEquals(4, rows.size(), run::toString);
        String[] ids = {"send-recv-busy", "send-recv-events", "write-read-events", "unsig-write-read-events"};
        String[] seedRtt = {"15.7", "21.1", "14.3", "8.3"};
        for (int i = 0; i < 4; i++) {
            String[] r = rows.get(i);
            assertEquals(ids[i], r[0], run::toString);
            assertTrue(Double.parseDouble(r[1]) > 0, "a round trip takes time: " + String.join(" ", r));
            for (int c = 2; c <= 6; c++) {
                assertTrue(Double.parseDouble(r[c]) >= 0, "a CPU share is not negative: " + String.join(" ", r));
            }
            assertTrue(Double.parseDouble(r[4]) > 0, "the client's loop used CPU: " + String.join(" ", r));
            assertEquals(seedRtt[i], r[9]);
        }
        assertEquals("1.00", rows.get(0)[8], "variant 1 is the ratios' base");
        // variants 3 and 4: the server's program is passive until the client's final count
        assertTrue(Double.parseDouble(rows.get(2)[5]) < Double.parseDouble(rows.get(0)[5]) + 1e-9,
                "a passive server uses less CPU than a busy-polling one: " + run);
        expect(ToolRun.of("study", "pingpong", "--examples", "-d", "soft0"), 2, "--examples");
        expect(ToolRun.of("study", "pingpong", "--examples", "-s", "1m"), 2, "64 KiB");
    }

    @Test
    void badInputEndsWithAMessageAndExitCode() {
        expect(ToolRun.of("study"), 2, "Missing study");
        expect(ToolRun.of("study", "pingpong", "-n", "0"), 2, "-n 0");
        expect(ToolRun.of("study", "pingpong", "-n", "2000000000"), 2, "-n 2000000000");
        expect(ToolRun.of("study", "pingpong", "--warmup", "-1"), 2, "--warmup -1");
        expect(ToolRun.of("study", "pingpong", "-s", "0"), 2, "-s 0");
        expect(ToolRun.of("study", "pingpong", "-s", "lots"), 2, "'lots' is not a size");
        expect(ToolRun.of("study", "pingpong", "--variants", "7"), 2, "--variants: '7'");
        expect(ToolRun.of("study", "pingpong", "--plot", "x.jpg"), 2, "must end in .png");
        expect(ToolRun.of("study", "pingpong", "--bogus"), 2, "Unknown option: '--bogus'");
        expect(ToolRun.of("study", "pingpong", "-d", "no-such-dev", "-n", "1"), 1, "no-such-dev");
        expect(ToolRun.of("study", "pingpong", "-i", "2", "-n", "1", "--warmup", "0"), 1, "rdma4j");
        expect(ToolRun.of("study", "regcost", "--max", "5000"), 2, "power of 2");
        expect(ToolRun.of("study", "regcost", "-n", "0"), 2, "-n 0");
        expect(ToolRun.of("study", "regcost", "-d", "no-such-dev"), 1, "no-such-dev");
    }

    private static void expect(ToolRun run, int code, String inErr) {
        assertEquals(code, run.exitCode(), run::toString);
        assertTrue(run.err().contains(inErr), () -> "stderr should say '" + inErr + "'\n" + run);
        assertTrue(!run.err().contains("\tat "), () -> "no stack trace\n" + run);
    }

    /** The rows after the header line that starts with {@code first}, up to the first blank line. */
    private static List<String[]> table(String out, String first, int columns) {
        List<String> lines = out.lines().toList();
        int header = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(first + " ")) {
                header = i;
                break;
            }
        }
        assertTrue(header >= 0, "no table header in\n" + out);
        assertEquals(columns, lines.get(header).trim().split("\\s+").length, lines.get(header));
        List<String[]> rows = new java.util.ArrayList<>();
        for (int i = header + 1; i < lines.size() && !lines.get(i).isBlank(); i++) {
            String[] r = lines.get(i).trim().split("\\s+");
            assertEquals(columns, r.length, lines.get(i));
            rows.add(r);
        }
        return rows;
    }

    private static void assertPng(Path png) throws IOException {
        BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image, png + " is not a PNG");
        assertTrue(image.getWidth() >= 400 && image.getHeight() >= 300, png + " is too small");
        int background = image.getRGB(0, 0);
        int differing = 0;
        for (int y = 0; y < image.getHeight(); y += 4) {
            for (int x = 0; x < image.getWidth(); x += 4) {
                if (image.getRGB(x, y) != background) {
                    differing++;
                }
            }
        }
        assertTrue(differing > 500, png + " is almost blank");
    }
}
