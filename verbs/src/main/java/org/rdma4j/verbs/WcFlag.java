// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Bits of {@link WorkCompletion#wcFlags()}, mirroring {@code enum ibv_wc_flags}. */
public final class WcFlag {
    /** {@code IBV_WC_GRH}: a 40-byte GRH precedes the payload in the receive buffer (UD, S-UD-1). */
    public static final int GRH = 1;
    /** {@code IBV_WC_WITH_IMM}: {@link WorkCompletion#immData()} is valid. */
    public static final int WITH_IMM = 1 << 1;
    /**
     * {@code IBV_WC_IP_CSUM_OK}: the device checked the IP checksum of a received packet and found it
     * right (offload); not set by the soft device.
     */
    public static final int IP_CSUM_OK = 1 << 2;
    /** {@code IBV_WC_WITH_INV}: {@link WorkCompletion#invalidatedRkey()} is valid (SEND with invalidate). */
    public static final int WITH_INV = 1 << 3;

    private WcFlag() {}
}
