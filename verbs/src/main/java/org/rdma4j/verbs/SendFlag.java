// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Bits of {@link SendWorkRequest#sendFlags()}, mirroring {@code enum ibv_send_flags}. */
public final class SendFlag {
    /**
     * {@code IBV_SEND_FENCE}: wait for all earlier RDMA READs and atomics to complete before starting
     * this request (S-SIG-2).
     */
    public static final int FENCE = 1;
    /**
     * {@code IBV_SEND_SIGNALED}: generate a work completion on success too (a failure always completes,
     * S-SIG-1).
     */
    public static final int SIGNALED = 1 << 1;
    /**
     * {@code IBV_SEND_SOLICITED}: set the solicited-event bit, which wakes a receiver armed with
     * solicited-only notification.
     */
    public static final int SOLICITED = 1 << 2;
    /**
     * {@code IBV_SEND_INLINE}: copy the gather list into the work request at post time; lkeys are not
     * checked, up to the QP's {@code max_inline_data} bytes (S-DATA-2, S-POST-2).
     */
    public static final int INLINE = 1 << 3;
    /**
     * {@code IBV_SEND_IP_CSUM}: checksum offload for raw packet QPs, which rdma4j does not create; the
     * soft device ignores it.
     */
    public static final int IP_CSUM = 1 << 4;

    private SendFlag() {}
}
