// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class PeerTextTest {
    @Test
    void controlCharactersAndNonAsciiBecomeQuestionMarks() {
        assertEquals("?[2J??ab?c?", PeerText.printable("\u001b[2J\u0007\rab\u0000c\ufffd"));
        assertEquals("plain text: 6.06", PeerText.printable("plain text: 6.06"));
        assertEquals("?[2J???(???x", PeerText.printable(HostileBytes.TERMINAL_ATTACK, 0,
                HostileBytes.TERMINAL_ATTACK.length));
    }

    @Test
    void aCStringEndsAtTheFirstNul() {
        byte[] b = "6.06\u0000\u001b[2J".getBytes(StandardCharsets.US_ASCII);
        assertEquals("6.06", PeerText.cString(b));
        assertEquals("6.06?", PeerText.cString("6.06\u001b".getBytes(StandardCharsets.US_ASCII)));
    }

    @Test
    void unterminatedPeerDataInMemoryIsReadToItsEnd() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(HostileBytes.TERMINAL_ATTACK.length);
            MemorySegment.copy(HostileBytes.TERMINAL_ATTACK, 0, s, ValueLayout.JAVA_BYTE, 0, (int) s.byteSize());
            assertEquals(s.byteSize(), PeerText.length(s));
            assertEquals("?[2J???(???x", PeerText.cString(s));
            s.set(ValueLayout.JAVA_BYTE, 4, (byte) 0);
            assertEquals("?[2J", PeerText.cString(s));
        }
    }
}
