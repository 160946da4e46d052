// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** The progress bar: its label follows the run, and it is off the screen before a report is printed. */
class ProgressTest {
    @Test
    void theLabelNamesTheSizeBeingMeasuredAndTheTimeLeft() {
        String first = Progress.line(0.5, 2, true, 4000);
        String later = Progress.line(0.25, 1024, true, 1000);
        assertTrue(first.contains(" 50% 2 B (-a: 2^1), 4 s left"), first);
        assertTrue(later.contains(" 25% 1024 B (-a: 2^10), 3 s left"), later);
        assertTrue(Progress.line(0.1, 65536, false, 30_000).endsWith("65536 B, 4 min 30 s left"));
        assertTrue(Progress.line(0, 2, false, 0).endsWith("estimating time left"));
    }

    @Test
    void theBarIsErasedBeforeTheRunPrintsAndWhenClosed() {
        PerfParams p = PerfArgs.params("write_lat", "-a", "-n", "1000");
        StringWriter screen = new StringWriter();
        PrintWriter err = new PrintWriter(screen, true);
        PerfRun run = new PerfRun(p, err, err);
        Progress bar = Progress.attach(p, run, err);
        try {
            p.size = 2;
            bar.draw(p, 500, 1000);
            bar.draw(p, 600, 3000);
            String bar2 = Progress.line(0.6, 2, true, 2000);
            String before = Progress.line(0.5, 2, true, 0);
            assertTrue(screen.toString().endsWith("\r" + bar2 + " ".repeat(before.length() - bar2.length())),
                    "a shorter label covers the longer one: " + screen);
            run.beforeOutput.run(); // what PerfRun does before a result line
            String shown = screen.toString();
            assertTrue(shown.endsWith("\r" + " ".repeat(before.length()) + "\r"), shown);
            p.size = 4;
            bar.draw(p, 100, 4000);
            assertTrue(screen.toString().contains("4 B (-a: 2^2)"), screen::toString);
        } finally {
            bar.close();
        }
        String end = screen.toString();
        assertTrue(end.endsWith("\r"), "closing erases the bar: " + end);
        assertEquals(PerfRun.NOTHING, run.beforeOutput);
        run.beforeOutput.run();
        assertEquals(end, screen.toString(), "nothing to erase after close");
        assertFalse(Progress.line(0.6, 2, true, 2000).contains("\n"));
    }
}
