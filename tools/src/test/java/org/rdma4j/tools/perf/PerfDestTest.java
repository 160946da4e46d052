// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Gid;

/**
 * The key messages against strings derived by hand from perftest's KEY_PRINT_FMT
 * ("%04x:%04x:%06x:%06x:%08x:%016llx:%08x") and KEY_PRINT_FMT_GID (the same, the 16 GID bytes as
 * "%02x:" each between VA and SRQN, and a trailing ':'), sent with their NUL in 59 and 108 bytes.
 */
class PerfDestTest {
    private static final Gid GID = Gid.parse("::ffff:10.77.0.2");
    private static final PerfDest DEST = new PerfDest(0, 16, 0x11, 0xa7fc5e, 0x0c554fc5, 0x7f61a0243000L, GID, 0);

    @Test
    void withoutGidIsKeyPrintFmtIn59Bytes() {
        byte[] wire = DEST.toWire(false);
        assertEquals(59, wire.length);
        String expected = "0000:0010:000011:a7fc5e:0c554fc5:00007f61a0243000:00000000";
        assertEquals(58, expected.length());
        assertEquals(expected, new String(wire, 0, 58, StandardCharsets.US_ASCII));
        assertEquals(0, wire[58]);
    }

    @Test
    void withGidIsKeyPrintFmtGidIn108Bytes() {
        byte[] wire = DEST.toWire(true);
        assertEquals(108, wire.length);
        String expected = "0000:0010:000011:a7fc5e:0c554fc5:00007f61a0243000:"
                + "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:4d:00:02:00000000:";
        assertEquals(107, expected.length());
        assertEquals(expected, new String(wire, 0, 107, StandardCharsets.US_ASCII));
        assertEquals(0, wire[107]);
    }

    @Test
    void parsesWhatTheCToolsSend() {
        // as ib_write_bw on rxe0 would send it: LID 0, 16 outstanding reads, rkey with the top bit set
        byte[] msg = new byte[108];
        byte[] text = ("0000:0010:0000a3:123456:80001234:000055d0c0de1000:"
                + "fe:80:00:00:00:00:00:00:02:11:22:ff:fe:33:44:55:00000000:").getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(text, 0, msg, 0, text.length);
        PerfDest d = PerfDest.fromWire(msg, true);
        assertEquals(0, d.lid());
        assertEquals(16, d.outReads());
        assertEquals(0xa3, d.qpn());
        assertEquals(0x123456, d.psn());
        assertEquals(0x80001234, d.rkey());
        assertEquals(0x55d0c0de1000L, d.vaddr());
        assertEquals(Gid.parse("fe80::211:22ff:fe33:4455"), d.gid());
        assertEquals(0, d.srqn());
    }

    @Test
    void roundTripsBothForms() {
        PerfDest big = new PerfDest(0xffff, 0xffff, 0xffffff, 0xffffff, -1, -1L, GID, 0xffffffff);
        for (boolean g : new boolean[] {false, true}) {
            PerfDest back = PerfDest.fromWire(big.toWire(g), g);
            assertEquals(g ? big : new PerfDest(0xffff, 0xffff, 0xffffff, 0xffffff, -1, -1L, Gid.ZERO, -1), back);
            assertArrayEquals(big.toWire(g), back.toWire(g));
        }
    }

    @Test
    void aShortOrGarbledMessageIsPerftestsParseError() {
        byte[] msg = "0000:0001:zz".getBytes(StandardCharsets.US_ASCII);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PerfDest.fromWire(msg, false));
        assertEquals("Couldn't parse line <0000:0001:zz>", e.getMessage());
        byte[] bad = DEST.toWire(false);
        bad[0] = 'x';
        assertThrows(IllegalArgumentException.class, () -> PerfDest.fromWire(bad, false));
    }
}
