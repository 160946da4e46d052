// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A shared receive queue ({@code struct ibv_srq}): one pool of receives for every QP created with it
 * ({@link QpInitAttr#srq}); each receive is consumed by whichever QP gets a message first (S-SRQ-1).
 * Armed with a limit, it raises {@link AsyncEventType#SRQ_LIMIT_REACHED} once when fewer receives
 * remain (S-SRQ-2). {@link #close()} is {@code ibv_destroy_srq} and fails with EBUSY while a QP uses
 * it. Thread safe.
 */
public interface SharedReceiveQueue extends VerbsResource {
    /**
     * The protection domain the SRQ was created in ({@code ibv_srq.pd}).
     *
     * @return the PD
     */
    ProtectionDomain pd();

    /**
     * The SRQ number ({@code ibv_get_srq_num}; an XRC notion in libibverbs, given for diagnostics here).
     *
     * @return the SRQ number
     */
    int srqn();

    /**
     * {@code ibv_post_srq_recv}: adds receives to the pool.
     *
     * @param wr the first request of the chain
     * @throws PostException as for {@link QueuePair#postRecv}: EINVAL (too many SGEs), ENOMEM (the SRQ
     *     is full, S-SRQ-3)
     */
    void postRecv(RecvWorkRequest wr);

    /**
     * {@code ibv_modify_srq} with {@link SrqAttrMask} bits: resize (MAX_WR) and/or arm the limit
     * (LIMIT). A resize keeps the receives posted (S-SRQ-3).
     *
     * @param attr the attributes; only those named in {@code mask} are read
     * @param mask {@link SrqAttrMask} bits
     * @throws VerbsException EINVAL for unknown mask bits, a size outside 1..{@code max_srq_wr} or
     *     below the receives posted or the armed limit, or a limit above the size
     */
    void modify(SrqAttr attr, int mask);

    /**
     * {@code ibv_query_srq}.
     *
     * @return the current size, SGEs per receive and limit (0 when the limit is not armed)
     */
    SrqAttr query();
}
