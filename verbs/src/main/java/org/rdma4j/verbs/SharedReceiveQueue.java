// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** A shared receive queue ({@code struct ibv_srq}). Thread safe. */
public interface SharedReceiveQueue extends VerbsResource {
    ProtectionDomain pd();

    /** The SRQ number. */
    int srqn();

    /** {@code ibv_post_srq_recv}: same errors as {@link QueuePair#postRecv}. */
    void postRecv(RecvWorkRequest wr);

    /** {@code ibv_modify_srq} with {@link SrqAttrMask} bits: resize (MAX_WR) and/or arm the limit. */
    void modify(SrqAttr attr, int mask);

    /** {@code ibv_query_srq}. */
    SrqAttr query();
}
