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
        assertTrue(run.err().contains("Usage: rdma4j"), run::toString);
        assertFalse(run.err().contains("\tat "), run::toString);
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
