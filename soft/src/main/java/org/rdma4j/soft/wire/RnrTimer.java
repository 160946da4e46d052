// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

/**
 * The timers the wire encodes as small codes: the 5-bit RNR NAK timer (how long a requester
 * waits before resending to a receiver that had no receive WQE) and the 5-bit local ACK timeout.
 *
 * <p>Stateless; safe for any number of threads.
 */
public final class RnrTimer {
    /** An {@code rnr_retry} count of 7 means retry forever. */
    public static final int RNR_RETRY_INFINITE = 7;

    /** RNR timer code to nanoseconds (IBTA table; code 0 is the longest, 655.36 ms). */
    private static final long[] NANOS = {
        655_360_000L, 10_000L, 20_000L, 30_000L, 40_000L, 60_000L, 80_000L, 120_000L,
        160_000L, 240_000L, 320_000L, 480_000L, 640_000L, 960_000L, 1_280_000L, 1_920_000L,
        2_560_000L, 3_840_000L, 5_120_000L, 7_680_000L, 10_240_000L, 15_360_000L, 20_480_000L, 30_720_000L,
        40_960_000L, 61_440_000L, 81_920_000L, 122_880_000L, 163_840_000L, 245_760_000L, 327_680_000L,
        491_520_000L,
    };

    private RnrTimer() {
    }

    /**
     * {@return the delay it stands for, in nanoseconds}
     *
     * @param code an RNR timer code; only the low 5 bits are used
     */
    public static long nanos(int code) {
        return NANOS[code & 0x1F];
    }

    /**
     * {@return 4.096 us * 2^timeout in nanoseconds, or {@link Long#MAX_VALUE} for 0 (infinite)}
     *
     * @param timeout a local ACK timeout exponent; only the low 5 bits are used
     */
    public static long ackTimeoutNanos(int timeout) {
        int exponent = timeout & 0x1F;
        return exponent == 0 ? Long.MAX_VALUE : 4096L << exponent;
    }
}
