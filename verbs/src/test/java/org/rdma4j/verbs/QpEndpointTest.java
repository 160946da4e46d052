// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class QpEndpointTest {
    private static final QpEndpoint RC = new QpEndpoint(QpType.RC, 0x12, 0xABCDEF, 0x123456,
            Gid.parse("::ffff:10.1.2.3"), Mtu.MTU_4096, 0);
    private static final QpEndpoint UD = new QpEndpoint(QpType.UD, 0, 0x11, 0, Gid.parse("fd00::1"), Mtu.MTU_1024,
            0x80000001);

    @Test
    void textFormIsDocumentedLayout() {
        assertEquals("RC:0012:abcdef:123456:00000000000000000000ffff0a010203:4096:00000000", RC.toString());
        assertEquals("UD:0000:000011:000000:fd000000000000000000000000000001:1024:80000001", UD.toString());
    }

    @Test
    void textFormRoundTrips() {
        assertEquals(RC, QpEndpoint.parse(RC.toString()));
        assertEquals(UD, QpEndpoint.parse(" " + UD + "\n"));
    }

    @Test
    void byteFormRoundTripsAndHasTheDocumentedLayout() {
        byte[] b = RC.toBytes();
        assertEquals(QpEndpoint.BYTES, b.length);
        assertEquals(1, b[0]);
        assertEquals(2, b[1]);
        assertEquals(5, b[2]);
        assertEquals(0x12, b[5]);
        assertEquals((byte) 0xAB, b[9]);
        assertEquals((byte) 0x56, b[15]);
        assertEquals((byte) 0x0a, b[32]);
        assertEquals(RC, QpEndpoint.fromBytes(b));
        assertEquals(UD, QpEndpoint.fromBytes(UD.toBytes()));
    }

    @Test
    void malformedFormsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> QpEndpoint.parse("RC:0000:000011:000000"));
        assertThrows(IllegalArgumentException.class, () -> QpEndpoint.parse(RC.toString().replace("RC", "XRC")));
        assertThrows(IllegalArgumentException.class, () -> QpEndpoint.parse(RC.toString().replace(":4096:", ":4000:")));
        assertThrows(IllegalArgumentException.class, () -> QpEndpoint.parse(RC.toString().replace("abcdef", "abcdeg")));
        byte[] b = RC.toBytes();
        assertThrows(IllegalArgumentException.class, () -> QpEndpoint.fromBytes(new byte[35]));
        b[0] = 2;
        assertThrows(IllegalArgumentException.class, () -> QpEndpoint.fromBytes(b));
        byte[] c = RC.toBytes();
        c[1] = 9;
        assertThrows(IllegalArgumentException.class, () -> QpEndpoint.fromBytes(c));
    }

    @Test
    void fieldsOutsideTheirWidthsAreRejected() {
        Gid g = Gid.parse("fd00::1");
        assertThrows(IllegalArgumentException.class, () -> new QpEndpoint(QpType.RC, 0, 1 << 24, 0, g, Mtu.MTU_256, 0));
        assertThrows(IllegalArgumentException.class, () -> new QpEndpoint(QpType.RC, 0, 1, -1, g, Mtu.MTU_256, 0));
        assertThrows(IllegalArgumentException.class, () -> new QpEndpoint(QpType.RC, 0x10000, 1, 0, g, Mtu.MTU_256, 0));
        assertThrows(IllegalArgumentException.class, () -> new QpEndpoint(QpType.RC, 0, 1, 0, null, Mtu.MTU_256, 0));
    }

    @Test
    void gidBytesSurviveTheByteForm() {
        assertArrayEquals(RC.gid().bytes(), QpEndpoint.fromBytes(RC.toBytes()).gid().bytes());
    }
}
