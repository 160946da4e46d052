// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** perftest's device identification (ib_dev_name) and its inline choice (ctx_set_max_inline). */
class DeviceKindTest {
    static final String NOT_RECOGNIZED = "Device not recognized to implement inline feature. Disabling it";

    @Test
    void softwareDevicesAreUnknown() {
        assertEquals(DeviceKind.UNKNOWN, DeviceKind.of(0xFFFFFF, 0x0A4A)); // rdma4j's soft device
        assertEquals(DeviceKind.UNKNOWN, DeviceKind.of(0xFFFFFF, 0)); // rxe
        assertEquals(DeviceKind.UNKNOWN, DeviceKind.of(0x626d74, 0)); // siw
        assertEquals(DeviceKind.UNKNOWN, DeviceKind.of(0x15b3, 12345));
    }

    @Test
    void knownDevicesByVendorAndPart() {
        assertEquals(DeviceKind.MELLANOX, DeviceKind.of(0x15b3, 4119)); // ConnectX-5
        assertEquals(DeviceKind.MELLANOX, DeviceKind.of(0x15b3, 4125)); // ConnectX-6 Dx
        assertEquals(DeviceKind.MELLANOX, DeviceKind.of(0x15b3, 41686)); // BlueField-2
        assertEquals(DeviceKind.NETXTREME, DeviceKind.of(0x14e4, 5638));
        assertEquals(DeviceKind.EFA, DeviceKind.of(0x1d0f, 61344));
        assertEquals(DeviceKind.HNS, DeviceKind.of(0x19e5, 41519));
        assertEquals(DeviceKind.QLOGIC_E4, DeviceKind.of(0x1077, 5684));
        assertEquals(DeviceKind.ERDMA, DeviceKind.of(0x1ded, 4223));
        assertEquals(DeviceKind.CHELSIO, DeviceKind.of(0x1425, 0x5410));
        assertEquals(DeviceKind.UNKNOWN, DeviceKind.of(0x1425, 0x1000));
        assertEquals(DeviceKind.INTEL_GEN1, DeviceKind.of(0x8086, 14289));
        assertEquals(DeviceKind.INTEL_GEN2, DeviceKind.of(0x8086, 0x1234)); // any other Intel part
        assertEquals(DeviceKind.TCU1, DeviceKind.of(0x209b, 0x1000));
        assertEquals(DeviceKind.UNKNOWN, DeviceKind.of(0x209b, 0x1001));
        assertEquals(DeviceKind.YUNSILICON_DIAMOND, DeviceKind.of(0x1f67, 0x1023));
        assertEquals(DeviceKind.YUNSILICON_ANDES, DeviceKind.of(0x1f67, 0x1111));
        assertEquals(DeviceKind.NBL_RNIC, DeviceKind.of(0x1f0f, 0x3500));
        assertEquals(DeviceKind.NBL_LEONIS, DeviceKind.of(0x1f0f, 0x3403));
        assertEquals(DeviceKind.NBL_LEONIS, DeviceKind.of(0x1f0f, 0x7777));
        assertEquals(DeviceKind.PENSANDO, DeviceKind.of(0x1dd8, 2));
    }

    @Test
    void latencyInlineByDevice() {
        assertEquals(220, DeviceKind.MELLANOX.latencyInline(Verb.WRITE, Connection.RC));
        assertEquals(236, DeviceKind.MELLANOX.latencyInline(Verb.SEND, Connection.UC));
        assertEquals(188, DeviceKind.MELLANOX.latencyInline(Verb.SEND, Connection.UD));
        assertEquals(96, DeviceKind.NETXTREME.latencyInline(Verb.WRITE, Connection.RC));
        assertEquals(32, DeviceKind.EFA.latencyInline(Verb.SEND, Connection.UD));
        assertEquals(128, DeviceKind.QLOGIC_E4.latencyInline(Verb.SEND, Connection.RC));
        assertEquals(48, DeviceKind.INTEL_GEN1.latencyInline(Verb.WRITE, Connection.RC));
        assertEquals(101, DeviceKind.INTEL_GEN2.latencyInline(Verb.WRITE, Connection.RC));
        assertEquals(0, DeviceKind.NBL_LEONIS.latencyInline(Verb.SEND, Connection.UD));
        assertEquals(32, DeviceKind.NBL_LEONIS.latencyInline(Verb.SEND, Connection.RC));
        assertEquals(434, DeviceKind.NBL_RNIC.latencyInline(Verb.SEND, Connection.UD));
        assertEquals(465, DeviceKind.NBL_RNIC.latencyInline(Verb.WRITE, Connection.RC));
    }

    record Choice(int inline, String out, String err) {}

    static Choice choose(DeviceKind kind, String test, String... args) {
        PerfParams p = PerfArgs.params(test, args);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        new PerfResources(p, new PrintWriter(out, true), new PrintWriter(err, true)).chooseInline(kind);
        return new Choice(p.inlineSize, out.toString(), err.toString());
    }

    @Test
    void knownDeviceLatencyTestsInlineByDefault() {
        assertEquals(220, choose(DeviceKind.MELLANOX, "write_lat").inline());
        assertEquals(236, choose(DeviceKind.MELLANOX, "send_lat").inline());
        assertEquals(188, choose(DeviceKind.MELLANOX, "send_lat", "-c", "UD").inline());
        assertEquals(96, choose(DeviceKind.NETXTREME, "send_lat").inline());
        assertEquals(100, choose(DeviceKind.MELLANOX, "write_lat", "-I", "100").inline());
        assertEquals(0, choose(DeviceKind.NETXTREME, "read_lat").inline());
    }

    @Test
    void knownDeviceBandwidthTestsDoNotInlineUnlessAsked() {
        assertEquals(0, choose(DeviceKind.MELLANOX, "write_bw").inline());
        assertEquals(0, choose(DeviceKind.NETXTREME, "send_bw").inline());
        Choice c = choose(DeviceKind.MELLANOX, "write_bw", "-I", "64");
        assertEquals(64, c.inline());
        assertEquals("", c.err());
    }

    @Test
    void unknownDeviceDoesNotInlineAndSaysSoWhenAsked() {
        for (String test : new String[] {"write_lat", "send_lat", "write_bw", "send_bw"}) {
            Choice quiet = choose(DeviceKind.UNKNOWN, test);
            assertEquals(0, quiet.inline(), test);
            assertEquals("", quiet.out() + quiet.err(), test);
            Choice asked = choose(DeviceKind.UNKNOWN, test, "-I", "64");
            assertEquals(0, asked.inline(), test);
            assertEquals(Tables.RESULT_LINE, asked.out(), test);
            assertEquals(NOT_RECOGNIZED + System.lineSeparator(), asked.err(), test);
        }
    }

    @Test
    void unknownDeviceSaysSoForReadAndAtomicWhoseInlineIsSetToZero() {
        // perftest zeroes READ/ATOMIC's inline size while parsing, so its unknown-device check sees a set size
        for (String test : new String[] {"read_lat", "atomic_bw"}) {
            Choice c = choose(DeviceKind.UNKNOWN, test);
            assertEquals(0, c.inline(), test);
            assertTrue(c.err().contains(NOT_RECOGNIZED), test);
        }
        assertFalse(choose(DeviceKind.MELLANOX, "read_lat").err().contains(NOT_RECOGNIZED));
    }
}
