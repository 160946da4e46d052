package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class Rdma4jTest {
    @Test
    void unknownCommandIsAUsageError() {
        ToolRun run = ToolRun.of("frobnicate");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("Unmatched argument at index 0: 'frobnicate'"), run::toString);
        assertTrue(run.err().contains("try 'rdma4j --help'"), run::toString);
        assertFalse(run.err().contains("\tat "), run::toString);
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
        "perf write_lat -s abc|rdma4j perf write_lat|Size argument abc should be a number",
        "perf write_bw --bogus|rdma4j perf write_bw|Unknown option: '--bogus'",
        "devinfo --bogus|rdma4j devinfo|Unknown option: '--bogus'",
        "pingpong --bogus|rdma4j pingpong|Unknown option: '--bogus'",
        "rping --bogus|rdma4j rping|Unknown option: '--bogus'",
        "study pingpong --bogus|rdma4j study pingpong|Unknown option: '--bogus'",
        "perf|rdma4j perf|Missing test",
    })
    void aUsageErrorIsTheMessageAndWhereTheHelpIsNotTheWholeUsage(String line, String command, String message) {
        ToolRun run = ToolRun.of(line.split(" "));
        assertTrue(run.exitCode() != 0, run::toString);
        assertTrue(run.err().contains(message), run::toString);
        assertTrue(run.err().strip().endsWith("try '" + command + " --help'"), run::toString);
        assertFalse(run.err().contains("Usage:"), run::toString);
        assertTrue(run.err().lines().count() <= 4, run::toString);
    }

    @Test
    void noCommandIsAUsageError() {
        ToolRun run = ToolRun.of();
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("Missing command"), run::toString);
    }

    @Test
    void helpListsTheCommands() {
        ToolRun run = ToolRun.of("--help");
        assertEquals(0, run.exitCode(), run::toString);
        for (String c : new String[] {"devices", "devinfo", "demo", "stress"}) {
            assertTrue(run.out().contains("  " + c + " "), run::toString);
        }
    }
}
