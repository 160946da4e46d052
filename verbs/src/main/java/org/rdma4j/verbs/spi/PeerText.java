// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

/**
 * Bytes or text a peer supplied (a REJ's private data, a name in a message), made safe for a log line:
 * every character outside printable ASCII (0x20 to 0x7E) becomes {@code '?'}, and at most {@link #MAX}
 * characters are kept (then "..." follows), so that escape sequences, CR/LF (a forged second log line),
 * NUL and broken UTF-8 never reach a terminal or a log file as they came. Providers and the connection
 * manager log what a peer supplied through this class only. Thread safe (stateless).
 */
public final class PeerText {
    /** What stands for a character that is not printed as it came. */
    public static final char REPLACEMENT = '?';
    /** The most characters of a peer's text one log line shows. */
    public static final int MAX = 64;

    private PeerText() {
    }

    /**
     * Peer-supplied text made safe to print.
     *
     * @param s the text, or null
     * @return {@code s} with every character outside 0x20..0x7E replaced, cut at {@link #MAX}; "null" for
     *     null
     */
    public static String printable(CharSequence s) {
        if (s == null) {
            return "null";
        }
        int n = Math.min(s.length(), MAX);
        StringBuilder sb = new StringBuilder(n + 3);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            sb.append(c >= 0x20 && c <= 0x7E ? c : REPLACEMENT);
        }
        return s.length() > MAX ? sb.append("...").toString() : sb.toString();
    }

    /**
     * The bytes of {@code b} up to the first NUL (private data is NUL padded), each byte outside
     * 0x20..0x7E replaced (no decoding), cut at {@link #MAX}; "" for null or empty.
     *
     * @param b the bytes, or null
     * @return the printable text
     */
    public static String printable(byte[] b) {
        if (b == null) {
            return "";
        }
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        StringBuilder sb = new StringBuilder(Math.min(n, MAX) + 3);
        for (int i = 0; i < Math.min(n, MAX); i++) {
            int c = b[i] & 0xFF;
            sb.append(c >= 0x20 && c <= 0x7E ? (char) c : REPLACEMENT);
        }
        return n > MAX ? sb.append("...").toString() : sb.toString();
    }
}
