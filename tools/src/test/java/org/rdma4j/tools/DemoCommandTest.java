package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class DemoCommandTest {
    @Test
    void toursTheControlPathAndReleasesEverything() {
        ToolRun run = ToolRun.of("demo");
        assertEquals(0, run.exitCode(), run::toString);
        String out = run.out();
        assertTrue(out.contains("opened soft0"), run::toString);
        assertTrue(out.contains("state PORT_ACTIVE (4)"), run::toString);
        assertTrue(out.matches("(?s).*lkey 0x[0-9a-f]{8}.*rkey 0x[0-9a-f]{8}.*"), run::toString);
        assertTrue(out.matches("(?s).*RESET -> INIT  mask STATE\\|ACCESS_FLAGS\\|PKEY_INDEX\\|PORT.*"), run::toString);
        assertTrue(out.matches("(?s).*INIT  -> RTR   mask STATE\\|AV\\|PATH_MTU.*"), run::toString);
        assertTrue(out.matches("(?s).*RTR   -> RTS   mask STATE\\|TIMEOUT\\|RETRY_CNT.*"), run::toString);
        assertTrue(out.contains("refused, EBUSY"), "closing the PD early must fail like ibv_dealloc_pd\n" + run);
        assertTrue(out.contains("close soft0"), run::toString);
        assertTrue(out.contains("done: every resource released."), run::toString);
        assertTrue(out.contains("data path: not available yet") || out.contains("B received \"rdma4j!!\""),
                run::toString);
    }

    @Test
    void unknownDeviceIsAOneLineError() {
        ToolRun run = ToolRun.of("demo", "-d", "nosuch0");
        assertEquals(Rdma4j.EXIT_VERBS_ERROR, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("rdma4j: ENODEV: "), run::toString);
        assertEquals(1, run.err().lines().count(), run::toString);
    }
}
