// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Verbs;

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
    void versionPrintsTheBuildsVersionAndCommit() {
        ToolRun run = ToolRun.of("--version");
        assertEquals(0, run.exitCode(), run::toString);
        String first = run.out().lines().findFirst().orElse("");
        assertEquals("rdma4j " + Verbs.version().version() + " (commit " + Verbs.version().commit() + ")", first);
        // the Maven build that runs this test fills both in
        assertTrue(first.matches("rdma4j \\d+\\.\\d+\\.\\d+\\S* \\(commit ([0-9a-f]{12}(-dirty)?|unknown)\\)"), first);
        assertFalse(Verbs.version().version().equals("unknown"), first);
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
