// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpEndpoint;
import org.rdma4j.verbs.QpType;

/** The 52-byte address message. */
class DestTest {
    private static final Gid LINK_LOCAL = Gid.parse("fe80::202:c9ff:fe00:1234");

    @Test
    void messageIsTheCToolsSprintfOutputAndANul() {
        byte[] msg = new Dest(0x1a, 0x123, 0xabcdef, LINK_LOCAL).toWire();
        assertEquals(Dest.WIRE_BYTES, msg.length);
        assertEquals("001a:000123:abcdef:fe800000000000000202c9fffe001234",
                new String(msg, 0, 51, StandardCharsets.US_ASCII));
        assertEquals(0, msg[51]);
        assertEquals("0000:000000:000000:00000000000000000000000000000000",
                new String(Dest.NONE.toWire(), 0, 51, StandardCharsets.US_ASCII));
    }

    @Test
    void gidTextGoesOneBigEndianWordAtATime() {
        // gid_to_wire_gid: htobe32 of each 32-bit word, printed %08x: the bytes in wire order
        Gid mapped = Gid.parse("::ffff:192.168.1.7");
        assertEquals("00000000000000000000ffffc0a80107", Dest.wireGid(mapped));
        assertEquals(mapped, Dest.parseWireGid("00000000000000000000ffffc0a80107"));
        assertEquals(LINK_LOCAL, Dest.parseWireGid("FE800000000000000202C9FFFE001234"));
    }

    @Test
    void parseRoundTripsAndStopsAtTheNul() {
        Dest d = new Dest(0xffff, 0xffffff, 0x000001, LINK_LOCAL);
        assertEquals(d, Dest.parse(d.toWire()));
        byte[] shortFields = new byte[Dest.WIRE_BYTES];
        byte[] text = "1:11:7:fe800000000000000202c9fffe001234".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(text, 0, shortFields, 0, text.length);
        assertEquals(new Dest(1, 0x11, 7, LINK_LOCAL), Dest.parse(shortFields));
    }

    @Test
    void parseRejectsWhatIsNotAnAddress() {
        for (String bad : new String[] {"", "done", "0000:000000:000000:0000", "0000:000000:000000:zz800000000000000202c9fffe001234",
            "10000:000000:000000:fe800000000000000202c9fffe001234", "0000:1000000:000000:fe800000000000000202c9fffe001234"}) {
            byte[] msg = new byte[Dest.WIRE_BYTES];
            byte[] text = bad.getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(text, 0, msg, 0, Math.min(text.length, msg.length));
            assertThrows(IllegalArgumentException.class, () -> Dest.parse(msg), bad);
        }
    }

    @Test
    void interfaceIdDecidesTheGrh() {
        assertTrue(new Dest(0, 1, 1, LINK_LOCAL).hasInterfaceId());
        assertTrue(new Dest(0, 1, 1, Gid.parse("::ffff:10.0.0.1")).hasInterfaceId());
        assertFalse(new Dest(0, 1, 1, Gid.ZERO).hasInterfaceId());
        assertFalse(new Dest(0, 1, 1, Gid.parse("fd00:1:2:3::")).hasInterfaceId());
    }

    @Test
    void aDestIsAnEndpointWithoutTheFieldsTheFlagsGive() {
        QpEndpoint e = new QpEndpoint(QpType.UC, 0x12, 0xABCDEF, 0x123456, LINK_LOCAL, Mtu.MTU_2048, 0);
        Dest d = Dest.of(e);
        assertEquals(new Dest(0x12, 0xABCDEF, 0x123456, LINK_LOCAL), d);
        assertEquals(e, Dest.parse(d.toWire()).toEndpoint(QpType.UC, Mtu.MTU_2048, 0));
        assertEquals(0x11111111, d.toEndpoint(QpType.UD, Mtu.MTU_1024, 0x11111111).qkey());
    }
}
