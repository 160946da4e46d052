// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.device;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Gid;

/** GIDs as glibc's inet_ntop prints them, which is what ibv_devinfo shows for RoCE v2. */
class GidTextTest {
    @Test
    void linkLocalCompressesTheLongestZeroRun() {
        assertEquals("fe80::202:c9ff:fe00:1234", ntop("fe800000000000000202c9fffe001234"));
    }

    @Test
    void ipv4MappedEndsInDottedDecimal() {
        assertEquals("::ffff:192.168.1.7", ntop("00000000000000000000ffffc0a80107"));
    }

    @Test
    void ipv4CompatibleEndsInDottedDecimal() {
        assertEquals("::10.0.0.1", ntop("0000000000000000000000000a000001"));
    }

    @Test
    void firstOfEqualRunsWinsAndSingleZerosStay() {
        assertEquals("2001:db8::1:0:0:1", ntop("20010db8000000000001000000000001"));
        assertEquals("2001:db8:0:1:1:1:1:1", ntop("20010db8000000010001000100010001"));
    }

    @Test
    void trailingAndLeadingRuns() {
        assertEquals("fe80::", ntop("fe800000000000000000000000000000"));
        assertEquals("::1", ntop("00000000000000000000000000000001"));
        assertEquals("::", ntop("00000000000000000000000000000000"));
    }

    @Test
    void fullFormHasEightGroupsOfFour() {
        assertEquals("fe80:0000:0000:0000:0202:c9ff:fe00:1234",
                GidText.full(Gid.of(HexFormat.of().parseHex("fe800000000000000202c9fffe001234"))));
    }

    private static String ntop(String hex) {
        return GidText.inetNtop(Gid.of(HexFormat.of().parseHex(hex)));
    }
}
