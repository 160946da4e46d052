// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A queue pair ({@code struct ibv_qp}). Posting to one QP from two threads is safe. {@link #modify}
 * follows the IBTA state table ({@link org.rdma4j.verbs.spi.QpTransitions}).
 */
public interface QueuePair extends VerbsResource {
    Context context();

    ProtectionDomain pd();

    /** The 24-bit queue pair number. */
    int qpn();

    QpType type();

    /** The current state (cheap: no query). */
    QpState state();

    CompletionQueue sendCq();

    CompletionQueue recvCq();

    /** The SRQ receives come from, or null. */
    SharedReceiveQueue srq();

    /**
     * {@code ibv_modify_qp}: applies the fields of {@code attr} named in {@code mask}
     * ({@link QpAttrMask}). A transition not in the IBTA table, a missing or an extra mask bit, or
     * an out-of-range value: EINVAL.
     */
    void modify(QpAttr attr, int mask);

    /**
     * {@code ibv_modify_qp} with the mask {@code attr} recorded itself: the attributes set through its
     * fluent setters ({@link QpAttr#mask()}). Same rules and errors as {@link #modify(QpAttr, int)}:
     * an attribute the transition does not accept, or a required one left unset, is EINVAL.
     */
    default void modify(QpAttr attr) {
        modify(attr, attr.mask());
    }

    /**
     * {@code ibv_query_qp}: fills and returns {@code out} and, unless it is null, {@code initOut} with
     * the attributes the QP was created with (type, CQs, SRQ, capabilities as created, sq_sig_all).
     */
    QpAttr query(QpAttr out, QpInitAttr initOut);

    /** {@code ibv_query_qp} without the init attributes: fills and returns {@code out}. */
    default QpAttr query(QpAttr out) {
        return query(out, null);
    }

    default QpAttr query() {
        return query(new QpAttr());
    }

    /** The init attributes half of {@code ibv_query_qp}, in a new {@link QpInitAttr}. */
    default QpInitAttr queryInitAttr() {
        QpInitAttr init = new QpInitAttr();
        query(new QpAttr(), init);
        return init;
    }

    /** The created capabilities (>= the requested ones). */
    QpCap cap();

    /**
     * {@code ibv_post_send} of a chain of work requests. Throws {@link PostException} naming the
     * first request not posted: EINVAL (wrong state, too many SGEs, inline too long, unaligned atomic,
     * bad opcode for the QP type), ENOMEM (send queue full).
     */
    void postSend(SendWorkRequest wr);

    /**
     * {@code ibv_post_recv} of a chain. Throws {@link PostException}: EINVAL (RESET state, too many
     * SGEs, QP uses an SRQ), ENOMEM (receive queue full).
     */
    void postRecv(RecvWorkRequest wr);

    /**
     * {@code ibv_attach_mcast}: this UD QP receives what is sent to QPN 0xFFFFFF with destination
     * {@code gid} (a multicast GID: {@code ff00::/8}, or IPv4-mapped 224.0.0.0/4). {@code lid} is kept
     * with the attachment, as uverbs keeps it (on RoCE it is otherwise unused). Attaching again with
     * the same GID and LID does nothing. EINVAL for a QP that is not UD or a GID that is not multicast;
     * ENOMEM past max_mcast_grp, max_mcast_qp_attach or max_total_mcast_qp_attach. A QP with
     * attachments cannot be closed (EBUSY) until they are detached, as with ibv_destroy_qp.
     */
    void attachMcast(Gid gid, int lid);

    /** {@code ibv_detach_mcast}: EINVAL if this QP is not attached to {@code gid} with {@code lid}. */
    void detachMcast(Gid gid, int lid);
}
