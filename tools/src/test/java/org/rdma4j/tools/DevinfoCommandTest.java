// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Device;

/** The lines ibv_devinfo prints, tab for tab, so the two tools' output can be diffed. */
class DevinfoCommandTest {
    @Test
    void showsSoft0AsIbvDevinfoWould() {
        ToolRun run = ToolRun.of("devinfo", "-d", "soft0");
        assertEquals(0, run.exitCode(), run::toString);
        List<String> lines = run.out().lines().toList();
        assertEquals("hca_id:\tsoft0", lines.get(0), run::toString);
        assertEquals("\ttransport:\t\t\tInfiniBand (0)", lines.get(1), run::toString);
        assertHas(run, "\tnode_guid:\t\t\t[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}");
        assertHas(run, "\tsys_image_guid:\t\t\t[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}");
        assertHas(run, "\tvendor_id:\t\t\t0x[0-9a-f]{4,}");
        assertHas(run, "\tphys_port_cnt:\t\t\t1");
        assertHas(run, "\t\tport:\t1");
        assertHas(run, "\t\t\tstate:\t\t\tPORT_ACTIVE \\(4\\)");
        assertHas(run, "\t\t\tmax_mtu:\t\t4096 \\(5\\)");
        assertHas(run, "\t\t\tactive_mtu:\t\t(256|512|1024|2048|4096) \\([1-5]\\)");
        assertHas(run, "\t\t\tlink_layer:\t\tEthernet");
        assertFalse(run.out().contains("max_qp:"), "device limits are for -v only");
        assertFalse(run.out().contains("GID["), "the GID table is for -v only");
        assertTrue(run.out().endsWith("\n\n"), "a blank line ends each port, as in ibv_devinfo");
    }

    @Test
    void verboseAddsLimitsGidsAndCounters() {
        ToolRun run = ToolRun.of("devinfo", "-d", "soft0", "-v");
        assertEquals(0, run.exitCode(), run::toString);
        assertHas(run, "\tmax_mr_size:\t\t\t0x[0-9a-f]+");
        assertHas(run, "\tmax_qp:\t\t\t\t[0-9]+");
        assertHas(run, "\tmax_qp_wr:\t\t\t[0-9]+");
        assertHas(run, "\tmax_pkeys:\t\t\t[0-9]+");
        assertHas(run, "\tlocal_ca_ack_delay:\t\t[0-9]+");
        assertHas(run, "\t\t\tgid_tbl_len:\t\t[0-9]+");
        assertHas(run, "\t\t\tGID\\[  0\\]:\t\t\\S+, RoCE v2");
        assertHas(run, "\t\t\tcounters:");
        int limits = run.out().indexOf("\tmax_qp:");
        int port = run.out().indexOf("\t\tport:\t1");
        int gid = run.out().indexOf("GID[");
        int counters = run.out().indexOf("counters:");
        assertTrue(limits < port && port < gid && gid < counters, "ibv_devinfo's order, counters last");
    }

    @Test
    void aPortThatIsDownShowsPortDownAndCountsLinkDowned() {
        Device d = SoftDevices.createLoopback("soft-devinfo-down");
        try {
            SoftDevices.setPortState(d.name(), 1, false);
            ToolRun run = ToolRun.of("devinfo", "-d", d.name(), "-v");
            assertEquals(0, run.exitCode(), run::toString);
            assertHas(run, "\t\t\tstate:\t\t\tPORT_DOWN \\(1\\)");
            assertHas(run, "\t\t\tphys_state:\t\tPOLLING \\(2\\)");
            assertHas(run, "\t\t\t\tlink_downed: 1");
            SoftDevices.setPortState(d.name(), 1, true);
            run = ToolRun.of("devinfo", "-d", d.name(), "-v");
            assertHas(run, "\t\t\tstate:\t\t\tPORT_ACTIVE \\(4\\)");
            assertHas(run, "\t\t\tphys_state:\t\tLINK_UP \\(5\\)");
        } finally {
            SoftDevices.remove(d);
        }
    }

    @Test
    void onePortOnly() {
        ToolRun run = ToolRun.of("devinfo", "-d", "soft0", "-i", "1");
        assertEquals(0, run.exitCode(), run::toString);
        assertHas(run, "\t\tport:\t1");
    }

    @Test
    void aPortTheDeviceDoesNotHaveIsRefusedLikeIbvDevinfo() {
        ToolRun run = ToolRun.of("devinfo", "-d", "soft0", "-i", "9");
        assertEquals(4, run.exitCode(), run::toString);
        assertEquals("Invalid port requested for device\n", run.err());
    }

    @Test
    void unknownDeviceExits255WithIbvDevinfosMessage() {
        ToolRun run = ToolRun.of("devinfo", "-d", "foo");
        assertEquals(255, run.exitCode(), run::toString);
        assertEquals("IB device 'foo' wasn't found\n", run.err());
        assertEquals("", run.out());
    }

    @Test
    void listNamesTheDevices() {
        ToolRun run = ToolRun.of("devinfo", "-l");
        assertEquals(0, run.exitCode(), run::toString);
        assertTrue(run.out().matches("(?s)\\d+ HCAs? found:\n.*\tsoft0\n.*"), run::toString);
    }

    @Test
    void badFlagGivesUsageNotAStackTrace() {
        ToolRun run = ToolRun.of("devinfo", "--bogus");
        assertTrue(run.exitCode() != 0, run::toString);
        assertTrue(run.err().contains("Unknown option: '--bogus'"), run::toString);
        assertTrue(run.err().contains("try 'rdma4j devinfo --help'"), run::toString);
        assertFalse(run.err().contains("\tat "), run::toString);
    }

    @Test
    void portZeroIsAUsageError() {
        ToolRun run = ToolRun.of("devinfo", "-i", "0");
        assertTrue(run.exitCode() != 0, run::toString);
        assertTrue(run.err().contains("try 'rdma4j devinfo --help'"), run::toString);
    }

    @Test
    void guidIsFourGroupsOfFourHexDigits() {
        assertEquals("0002:c9ff:fe00:1234", DevinfoCommand.guid(0x0002c9fffe001234L));
        assertEquals("ffff:0000:0000:0001", DevinfoCommand.guid(0xffff000000000001L));
    }

    private static void assertHas(ToolRun run, String lineRegex) {
        assertTrue(run.out().lines().anyMatch(l -> l.matches(lineRegex)),
                () -> "no line matching /" + lineRegex.replace("\t", "\\t") + "/ in\n" + run);
    }
}
