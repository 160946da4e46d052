// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Bits of {@link SendWorkRequest#sendFlags()}, mirroring {@code enum ibv_send_flags}. */
public final class SendFlag {
    /** Wait for all earlier RDMA READs and atomics to complete before starting this request. */
    public static final int FENCE = 1;
    /** Generate a work completion on success. */
    public static final int SIGNALED = 1 << 1;
    /** Set the solicited-event bit: wakes a receiver armed with solicited-only notification. */
    public static final int SOLICITED = 1 << 2;
    /** Copy the gather list into the work request at post time; lkeys are not checked. */
    public static final int INLINE = 1 << 3;
    public static final int IP_CSUM = 1 << 4;

    private SendFlag() {}
}
