// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The bytes the suites move and check: a test pattern with no short period (so a misplaced packet
 * shows), written and checked at any offset of it, and the {@link AbstractVerbsTest#GUARD} bytes around
 * what a test expects to be written, checked untouched. The suites reach them through
 * {@link AbstractVerbsTest}'s methods of the same names.
 */
final class Patterns {
    private Patterns() {}

    /** Byte {@code i} of the test pattern {@code seed}: no short period, so misplaced packets show. */
    static byte patternByte(int seed, long i) {
        int x = (int) i * 0x9E3779B1 + seed * 0x85EBCA6B + (int) (i >>> 32);
        x ^= x >>> 15;
        x *= 0x2C1B3C6D;
        x ^= x >>> 12;
        return (byte) x;
    }

    /** Writes bytes {@code [from, from+len)} of pattern {@code seed} to {@code s[off, off+len)}. */
    static void fillPattern(MemorySegment s, long off, long len, int seed, long from) {
        for (long i = 0; i < len; i++) {
            s.set(ValueLayout.JAVA_BYTE, off + i, patternByte(seed, from + i));
        }
    }

    /** {@code s[off, off+len)} must hold bytes {@code [from, from+len)} of pattern {@code seed}. */
    static void assertPattern(MemorySegment s, long off, long len, int seed, long from, String what) {
        for (long i = 0; i < len; i++) {
            byte got = s.get(ValueLayout.JAVA_BYTE, off + i);
            byte want = patternByte(seed, from + i);
            if (got != want) {
                fail(what + ": byte " + (from + i) + " (at offset " + (off + i) + ") is 0x"
                        + Integer.toHexString(got & 0xff) + ", expected 0x" + Integer.toHexString(want & 0xff));
            }
        }
    }

    /** {@code s[from, to)} must still be {@link AbstractVerbsTest#GUARD}. */
    static void assertGuard(MemorySegment s, long from, long to, String what) {
        for (long i = from; i < to; i++) {
            byte got = s.get(ValueLayout.JAVA_BYTE, i);
            if (got != AbstractVerbsTest.GUARD) {
                fail(what + ": guard byte at " + i + " was overwritten with 0x" + Integer.toHexString(got & 0xff));
            }
        }
    }
}
