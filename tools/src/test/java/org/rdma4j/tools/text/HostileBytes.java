// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.text;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** For the tests of hostile peers: the bytes such a peer sends, and the check of what a tool printed. */
public final class HostileBytes {
    /** Clear screen (ESC [ 2 J), BEL, CR, invalid UTF-8 (C3 28, FF), C1 CSI (9B), DEL: none may be echoed. */
    public static final byte[] TERMINAL_ATTACK = concat("\u001b[2J".getBytes(StandardCharsets.US_ASCII),
            new byte[] {7, '\r', (byte) 0xC3, '(', (byte) 0xFF, (byte) 0x9B, 0x7F, 'x'});

    private HostileBytes() {
    }

    /** A fixed-size message: {@code head}, the terminal attack, then NULs (a NUL ends the attack). */
    public static byte[] message(String head, int size) {
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] m = new byte[size];
        System.arraycopy(h, 0, m, 0, Math.min(h.length, size));
        System.arraycopy(TERMINAL_ATTACK, 0, m, h.length, Math.min(TERMINAL_ATTACK.length, size - h.length));
        return m;
    }

    /** Fails naming the first character of {@code printed} that is neither printable ASCII nor a newline or tab. */
    public static void assertNoControlCharacters(String printed) {
        for (int i = 0; i < printed.length(); i++) {
            char c = printed.charAt(i);
            if (c != '\n' && c != '\t' && !PeerText.isPrintable(c)) {
                fail(String.format("character U+%04X at %d of what the tool printed:%n%s", (int) c, i,
                        PeerText.printable(printed.replace('\n', '|'))));
            }
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        o.writeBytes(a);
        o.writeBytes(b);
        return o.toByteArray();
    }
}
