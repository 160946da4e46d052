// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.rdma4j.tools.stress.StressReport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class StressCommandTest {
    private static final Pattern SUMMARY = Pattern.compile(
            "stress: messages=(\\d+) delivered=(\\d+) data_errors=0 duplicate_executions=0 retransmits=(\\d+)");

    @Test
    void cleanRunDeliversEverythingAndEndsWithTheSummary() {
        ToolRun run = ToolRun.of("stress", "--loss", "0", "--reorder", "0", "--dup", "0", "--corrupt", "0",
                "--messages", "300", "--seed", "1", "--max-size", "4096");
        assertEquals(0, run.exitCode(), run::toString);
        assertSummary(run, 300);
        assertTrue(run.out().startsWith("rdma4j stress: loss=0 reorder=0 dup=0 corrupt=0 messages=300 seed=1 qps=4 "
                + "max_size=4096 mtu=1024\n"), run::toString);
        assertTrue(run.out().contains("\nlink faults: lost=0 duplicated=0 reordered=0 corrupted=0\n"), run::toString);
        assertEquals("", run.err());
    }

    @Test
    void lossyRunRecoversEveryMessageAndShowsTheFaultsAndCounters() {
        ToolRun run = ToolRun.of("stress", "--loss", "0.05", "--reorder", "0.05", "--dup", "0.01", "--corrupt",
                "0.001", "--messages", "300", "--seed", "7", "--max-size", "8192", "--mtu", "512");
        assertEquals(0, run.exitCode(), run::toString);
        assertSummary(run, 300);
        Matcher faults = Pattern.compile("(?m)^link faults: lost=(\\d+) duplicated=(\\d+) reordered=(\\d+) "
                + "corrupted=(\\d+)$").matcher(run.out());
        assertTrue(faults.find(), run::toString);
        assertTrue(Long.parseLong(faults.group(1)) > 0, "5% loss over hundreds of packets loses some\n" + run);
        for (String counter : List.of("duplicate_request", "out_of_seq_request", "sent_seq_err_naks",
                "icrc_err_drops")) {
            assertTrue(run.out().matches("(?s).*\n  " + counter + " +\\d+\n.*"), counter + "\n" + run);
        }
    }

    @Test
    void seedFromTheClockIsPrintedSoTheRunCanBeRepeated() {
        ToolRun run = ToolRun.of("stress", "--messages", "20", "--max-size", "1024", "--qps", "1");
        assertEquals(0, run.exitCode(), run::toString);
        Matcher seed = Pattern.compile("^rdma4j stress: .* seed=(-?\\d+) ").matcher(run.out());
        assertTrue(seed.find(), run::toString);
        assertTrue(run.out().contains("(to repeat this run: add --seed " + seed.group(1) + ")"), run::toString);
        assertSummary(run, 20);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--loss|1.5|--loss is a probability, 0..1, not 1.5",
        "--reorder|-0.1|--reorder is a probability, 0..1, not -0.1",
        "--dup|NaN|--dup is a probability, 0..1, not NaN",
        "--corrupt|2|--corrupt is a probability, 0..1, not 2.0",
        "--messages|0|--messages must be at least 1, not 0",
        "--qps|0|--qps must be 1..64, not 0",
        "--max-size|4|--max-size must be 8..1048576 bytes, not 4",
        "--mtu|1000|--mtu must be one of the IB MTUs 256, 512, 1024, 2048, 4096, not 1000",
        "--loss|lots|Invalid value for option '--loss'",
        "--seed|x|Invalid value for option '--seed'",
    })
    void badFlagIsAUsageErrorWithExitCode2(String flag, String value, String message) {
        // --messages 10 keeps the run short should a bad flag slip through.
        ToolRun run = flag.equals("--messages") ? ToolRun.of("stress", flag, value)
                : ToolRun.of("stress", flag, value, "--messages", "10");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith(message), run::toString);
        assertTrue(run.err().contains("try 'rdma4j stress --help'"), run::toString);
        assertFalse(run.err().contains("\tat "), run::toString);
        assertEquals("", run.out(), "nothing runs");
    }

    @Test
    void keyCountersComeFirstThenOtherNonZeroOnes() {
        Map<String, Long> all = new java.util.LinkedHashMap<>();
        all.put("zzz_other", 3L);
        all.put("quiet_other", 0L);
        all.put("icrc_err_drops", 0L);
        all.put("duplicate_request", 5L);
        assertEquals(List.of("duplicate_request", "icrc_err_drops", "zzz_other"),
                List.copyOf(StressReport.keyCounters(all).keySet()));
    }

    private static void assertSummary(ToolRun run, long messages) {
        List<String> lines = run.out().lines().toList();
        String last = lines.getLast();
        Matcher m = SUMMARY.matcher(last);
        assertTrue(m.matches(), "last line: " + last + "\n" + run);
        assertEquals(messages, Long.parseLong(m.group(1)), run::toString);
        assertEquals(messages, Long.parseLong(m.group(2)), run::toString);
    }
}
