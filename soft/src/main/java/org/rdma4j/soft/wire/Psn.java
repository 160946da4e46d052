// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

/**
 * 24-bit packet sequence number arithmetic.
 *
 * <p>PSNs wrap at 2^24, so they are ordered by the sign of their 24-bit difference: shifting the
 * 32-bit difference left by 8 puts bit 23 in the sign bit. Two PSNs are comparable while they are
 * less than 2^23 apart, which the transport's window (far below 2^23) guarantees.
 * {@snippet :
 * Psn.compare(0xFFFFFF, 0x000000) < 0      // 0xFFFFFF comes just before 0 after the wrap
 * Psn.add(0xFFFFFF, 2) == 0x000001
 * Psn.diff(0x000001, 0xFFFFFF) == 2
 * }
 *
 * <p>Stateless; safe for any number of threads.
 */
public final class Psn {
    /** The bits of a PSN. */
    public static final int MASK = 0x00FF_FFFF;
    /** Number of distinct PSNs. */
    public static final int MODULUS = 1 << 24;

    private Psn() {
    }

    /**
     * {@return {@code psn + n} modulo 2^24}
     *
     * @param psn a PSN
     * @param n   how far to move, may be negative
     */
    public static int add(int psn, int n) {
        return (psn + n) & MASK;
    }

    /**
     * {@return the PSN after it}
     *
     * @param psn a PSN
     */
    public static int next(int psn) {
        return (psn + 1) & MASK;
    }

    /**
     * {@return negative if {@code a} comes before {@code b}, 0 if equal, positive if after}
     *
     * @param a a PSN
     * @param b a PSN
     */
    public static int compare(int a, int b) {
        return (a - b) << 8;
    }

    /**
     * {@return the signed distance {@code a - b}, in -2^23 .. 2^23-1}
     *
     * @param a a PSN
     * @param b a PSN
     */
    public static int diff(int a, int b) {
        return ((a - b) << 8) >> 8;
    }

    /**
     * {@return whether {@code a} comes strictly before {@code b}}
     *
     * @param a a PSN
     * @param b a PSN
     */
    public static boolean before(int a, int b) {
        return compare(a, b) < 0;
    }
}
