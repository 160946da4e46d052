// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Bits for {@link SharedReceiveQueue#modify}, mirroring {@code enum ibv_srq_attr_mask}. */
public final class SrqAttrMask {
    /** {@code IBV_SRQ_MAX_WR}: resize the SRQ to {@link SrqAttr#maxWr()}. */
    public static final int MAX_WR = 1;
    /** {@code IBV_SRQ_LIMIT}: arm the limit event at {@link SrqAttr#srqLimit()}. */
    public static final int LIMIT = 1 << 1;

    private SrqAttrMask() {}
}
