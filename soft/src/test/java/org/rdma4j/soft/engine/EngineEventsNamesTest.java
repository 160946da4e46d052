// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.rdma4j.soft.wire.Aeth;

/** How the flight-recorder events and log lines write PSNs and AETH syndromes. */
class EngineEventsNamesTest {
    @Test
    void aPsnIsWrittenAs0xAndSixHexDigits() {
        assertEquals("0x00abcd", EngineEvents.psnHex(0xABCD));
        assertEquals("0x000000", EngineEvents.psnHex(0));
        assertEquals("0xffffff", EngineEvents.psnHex(-1), "24 bits");
    }

    @Test
    void everyNakSyndromeHasItsName() {
        assertEquals("PSN sequence error", EngineEvents.syndromeName(Aeth.NAK_PSN_SEQ_ERR));
        assertEquals("invalid request", EngineEvents.syndromeName(Aeth.NAK_INVALID_REQUEST));
        assertEquals("remote access error", EngineEvents.syndromeName(Aeth.NAK_REMOTE_ACCESS));
        assertEquals("remote operational error", EngineEvents.syndromeName(Aeth.NAK_REMOTE_OP));
        assertEquals("invalid RD request", EngineEvents.syndromeName(Aeth.TYPE_NAK | 4));
        assertEquals("RNR NAK (timer code 14)", EngineEvents.syndromeName(Aeth.RNR_NAK | 14));
        assertEquals("NAK code 9 (reserved)", EngineEvents.syndromeName(Aeth.TYPE_NAK | 9));
        assertEquals("ACK", EngineEvents.syndromeName(Aeth.ACK_CREDITS_INVALID));
    }
}
