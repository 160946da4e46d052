// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.link.FaultyLink;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.verbs.Device;

class DemoCommandTest {
    private static ToolRun demo;

    /** One run of the demo serves the tests that look at its output (it takes a few seconds). */
    private static synchronized ToolRun demo() {
        if (demo == null) {
            demo = ToolRun.of("demo");
        }
        return demo;
    }

    @Test
    void toursTheControlPathMovesDataAndReleasesEverything() {
        ToolRun run = demo();
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
        assertTrue(out.contains("B received \"rdma4j!!\""), run::toString);
        assertTrue(out.contains("B's memory now holds \"written!\""), run::toString);
        assertFalse(out.contains("FAILED"), run::toString);
        assertEquals("", run.err());
    }

    /** The sections and the units of their figures; the figures themselves depend on the machine. */
    @Test
    void movesDataAndPrintsLatencyAndBandwidth() {
        ToolRun run = demo();
        assertEquals(0, run.exitCode(), run::toString);
        String out = run.out();
        assertInOrder(run, "Move data between A and B", "Ping-pong: 8-byte RDMA WRITE round trips",
                "SEND/RECV round trips", "Bandwidth: 64 KiB RDMA WRITEs", "Tear down");
        String rtt = "   round trip: median [0-9.]+ us, average [0-9.]+ us \\(min [0-9.]+ us.*";
        assertEquals(2, out.lines().filter(l -> l.matches(rtt)).count(), "ping-pong and SEND/RECV\n" + run);
        String bandwidth = "   bandwidth [0-9,]+ MB/s \\([0-9,]+ MiB/s\\), [0-9,]+ messages/s";
        assertTrue(out.lines().anyMatch(l -> l.matches(bandwidth)), run::toString);
        assertTrue(out.contains("the last write (fresh random bytes) arrived intact: 65,536 of 65,536 bytes match"),
                run::toString);
        assertTrue(out.contains("done: every resource released."), run::toString);
    }

    private static void assertInOrder(ToolRun run, String... parts) {
        int at = 0;
        for (String p : parts) {
            int i = run.out().indexOf(p, at);
            assertTrue(i >= 0, () -> "missing, or out of order: " + p + "\n" + run);
            at = i + p.length();
        }
    }

    /** A device whose link loses every packet: the first SEND exhausts its retries. */
    @Test
    void aDataPathThatFailsEndsTheDemoWithExitCode1AndTheReason() {
        Device lossy = SoftDevices.createLoopback("demolossy0", new LoopbackFabric(),
                link -> new FaultyLink(link, new FaultyLink.Faults(1, 0, 0, 0), 1));
        try {
            ToolRun run = ToolRun.of("demo", "-d", "demolossy0");
            assertEquals(1, run.exitCode(), run::toString);
            assertTrue(run.out().contains("   data path: FAILED (work request 2 completed with RETRY_EXC_ERR"),
                    run::toString);
            assertTrue(run.err().startsWith("rdma4j: demo: the data path failed: "), run::toString);
            assertFalse(run.out().contains("Ping-pong"), "the demo stops moving data at the first failure\n" + run);
            assertTrue(run.out().contains("close demolossy0"), "and still tears down\n" + run);
            assertTrue(run.out().endsWith("done, with the failures above.\n"), run::toString);
        } finally {
            SoftDevices.remove(lossy);
        }
    }

    @Test
    void unknownDeviceIsAOneLineError() {
        ToolRun run = ToolRun.of("demo", "-d", "nosuch0");
        assertEquals(Rdma4j.EXIT_VERBS_ERROR, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("rdma4j: ENODEV: "), run::toString);
        assertEquals(1, run.err().lines().count(), run::toString);
        assertEquals("", run.out(), "no banner for a device that is not there: " + run);
        assertFalse(run.err().contains("java."), "what failed in words, not a Java class name: " + run);
    }

    @Test
    void theBannerNamesTheBindDeviceItTours() {
        // a name of its own: another tool run of this JVM may hold the default name (udp0) at the time
        ToolRun run = ToolRun.of("demo", "--bind", "127.0.0.61", "--udp-port", "26461", "-d", "demobind0");
        assertEquals(0, run.exitCode(), run::toString);
        assertTrue(run.out().startsWith("rdma4j demo: the verbs API on demobind0, step by step"), run::toString);
        assertTrue(run.out().contains("Open demobind0"), run::toString);
    }
}
