// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class DevicesCommandTest {
    @Test
    void listsSoft0InTheLayoutOfIbvDevices() {
        ToolRun run = ToolRun.of("devices");
        assertEquals(0, run.exitCode(), run::toString);
        List<String> lines = run.out().lines().toList();
        assertEquals("    device          \t   node GUID", lines.get(0), run::toString);
        assertEquals("    ------          \t----------------", lines.get(1), run::toString);
        assertTrue(lines.stream().anyMatch(l -> l.matches("    soft0 {11}\t[0-9a-f]{16}")), run::toString);
        assertEquals("", run.err());
    }

    @Test
    void refusesArguments() {
        ToolRun run = ToolRun.of("devices", "soft0");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("Unmatched argument"), run::toString);
    }
}
