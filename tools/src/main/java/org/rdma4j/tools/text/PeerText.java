// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.text;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;

/**
 * Text a peer sent (an exchange line, a version string, a message in a control frame, ping data), made
 * safe to print: every character outside printable ASCII (0x20 to 0x7E) becomes {@code '?'}, so that
 * escape sequences, BEL, CR, NUL and bytes of broken UTF-8 never reach a terminal or a file as they came.
 * The tools print whatever a peer supplied through this class only. Depends on nothing in the tools, so
 * every tool's package may use it.
 */
public final class PeerText {
    /** What stands for a character that is not printed as it came. */
    public static final char REPLACEMENT = '?';

    private PeerText() {
    }

    /** {@code s} with every character outside 0x20..0x7E replaced; "null" for null. */
    public static String printable(CharSequence s) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = isPrintable(c);
            if (!ok && sb == null) {
                sb = new StringBuilder(s.length()).append(s, 0, i);
            }
            if (sb != null) {
                sb.append(ok ? c : REPLACEMENT);
            }
        }
        return sb == null ? s.toString() : sb.toString();
    }

    /**
     * As {@link #printable(CharSequence)}, at most {@code max} characters of {@code s}, with "..." after
     * a cut; "(nothing)" for null (a peer that sent no text).
     */
    public static String printable(CharSequence s, int max) {
        if (s == null) {
            return "(nothing)";
        }
        return s.length() <= max ? printable(s) : printable(s.subSequence(0, max)) + "...";
    }

    /** {@code len} bytes from {@code off}, each byte outside 0x20..0x7E replaced (no decoding). */
    public static String printable(byte[] b, int off, int len) {
        byte[] out = new byte[len];
        for (int i = 0; i < len; i++) {
            byte c = b[off + i];
            out[i] = isPrintable((char) (c & 0xFF)) ? c : (byte) REPLACEMENT;
        }
        return new String(out, StandardCharsets.US_ASCII);
    }

    /** The bytes up to the first NUL (all of them if there is none), as {@link #printable(byte[], int, int)}. */
    public static String cString(byte[] b) {
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        return printable(b, 0, n);
    }

    /** strlen: how many bytes of {@code s} come before its first NUL (all of them when there is none). */
    public static long length(MemorySegment s) {
        for (long i = 0; i < s.byteSize(); i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) == 0) {
                return i;
            }
        }
        return s.byteSize();
    }

    /**
     * The bytes of {@code s} before its first NUL (all of them when there is none: a peer need not
     * terminate what it wrote), as {@link #printable(byte[], int, int)}.
     */
    public static String cString(MemorySegment s) {
        int n = (int) Math.min(length(s), Integer.MAX_VALUE - 8);
        return printable(s.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), 0, n);
    }

    /** True for the characters printed as they are: printable ASCII, 0x20 to 0x7E. */
    public static boolean isPrintable(char c) {
        return c >= 0x20 && c < 0x7F;
    }
}
