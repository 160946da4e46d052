// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A peer's text in a log line: no control characters, no second line, no endless line. */
class PeerTextTest {
    @Test
    void controlCharactersAndNonAsciiBecomeQuestionMarks() {
        assertEquals("a?[2J??FAKE?", PeerText.printable("a\u001b[2J\r\nFAKE\u00e9"));
        byte[] b = "ok\u001b\r\n".getBytes(StandardCharsets.ISO_8859_1);
        assertEquals("ok???", PeerText.printable(b));
    }

    @Test
    void privateDataEndsAtItsFirstNulAndLongTextIsCut() {
        assertEquals("go away", PeerText.printable(new byte[] {'g', 'o', ' ', 'a', 'w', 'a', 'y', 0, 'x'}));
        assertEquals("x".repeat(PeerText.MAX) + "...", PeerText.printable("x".repeat(500)));
        assertEquals("x".repeat(PeerText.MAX) + "...", PeerText.printable("x".repeat(500).getBytes(StandardCharsets.US_ASCII)));
        assertEquals("null", PeerText.printable((CharSequence) null));
        assertEquals("", PeerText.printable((byte[]) null));
    }
}
