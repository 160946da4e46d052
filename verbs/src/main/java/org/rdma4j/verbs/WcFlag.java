// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Bits of {@link WorkCompletion#wcFlags()}, mirroring {@code enum ibv_wc_flags}. */
public final class WcFlag {
    /** A 40-byte GRH precedes the payload in the receive buffer (UD). */
    public static final int GRH = 1;
    /** {@link WorkCompletion#immData()} is valid. */
    public static final int WITH_IMM = 1 << 1;
    public static final int IP_CSUM_OK = 1 << 2;
    /** {@link WorkCompletion#invalidatedRkey()} is valid (SEND with invalidate). */
    public static final int WITH_INV = 1 << 3;

    private WcFlag() {}
}
