// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A queue pair ({@code struct ibv_qp}): a send queue and a receive queue (or an SRQ) of one transport
 * type. It starts in RESET; {@link #modify} moves it through INIT, RTR and RTS following the IBTA state
 * table ({@link org.rdma4j.verbs.spi.QpTransitions}, S-QP-2), or {@link ProtectionDomain#queuePair}
 * does it for you. After an error it is in ERR and every outstanding request completes WR_FLUSH_ERR
 * (S-ERR-9). {@link #close()} is {@code ibv_destroy_qp}; it does not flush outstanding work requests
 * (move the QP to ERR and drain its CQs first if their completions matter), and it fails with EBUSY
 * while the QP is attached to a multicast group (and, on the native provider, while one of its
 * asynchronous events is unacknowledged). Thread safe: posting to one QP from two threads is safe.
 */
public interface QueuePair extends VerbsResource {
    /**
     * The context the QP was created in ({@code ibv_qp.context}).
     *
     * @return the context
     */
    Context context();

    /**
     * The protection domain the QP was created in ({@code ibv_qp.pd}).
     *
     * @return the PD
     */
    ProtectionDomain pd();

    /**
     * {@code ibv_qp.qp_num}: the queue pair number peers address.
     *
     * @return the 24-bit QPN
     */
    int qpn();

    /**
     * {@code ibv_qp.qp_type}.
     *
     * @return the transport type
     */
    QpType type();

    /**
     * The current state ({@code ibv_qp.state}): cheap, no query. A QP moved to ERR by an error
     * completion reports ERR.
     *
     * @return the state
     */
    QpState state();

    /**
     * {@code ibv_qp.send_cq}: where the send queue's work completions go.
     *
     * @return the send CQ
     */
    CompletionQueue sendCq();

    /**
     * {@code ibv_qp.recv_cq}: where the receive completions go (also for receives taken from an SRQ).
     *
     * @return the receive CQ
     */
    CompletionQueue recvCq();

    /**
     * {@code ibv_qp.srq}.
     *
     * @return the SRQ receives come from, or null when the QP has its own receive queue
     */
    SharedReceiveQueue srq();

    /**
     * {@code ibv_modify_qp}: applies the fields of {@code attr} named in {@code mask}
     * ({@link QpAttrMask}). A transition not in the IBTA table, a missing or an extra mask bit, or
     * an out-of-range value: EINVAL (S-QP-3, S-QP-5). Any state may move to RESET or ERR with no other
     * attribute (S-QP-4); RESET drops every outstanding work request.
     *
     * @param attr the attributes
     * @param mask the {@link QpAttrMask} bits of the attributes to apply, STATE included for a move
     * @throws VerbsException EINVAL as described (the message names the transition and the bits); the QP
     *     stays as it was
     */
    void modify(QpAttr attr, int mask);

    /**
     * {@code ibv_modify_qp} with the mask {@code attr} recorded itself: the attributes set through its
     * fluent setters ({@link QpAttr#mask()}). Same rules and errors as {@link #modify(QpAttr, int)}:
     * an attribute the transition does not accept, or a required one left unset, is EINVAL (S-API-2).
     *
     * @param attr the attributes, set through its fluent setters
     * @throws VerbsException as for {@link #modify(QpAttr, int)}
     */
    default void modify(QpAttr attr) {
        modify(attr, attr.mask());
    }

    /**
     * {@code ibv_query_qp}: fills and returns {@code out} and, unless it is null, {@code initOut} with
     * the attributes the QP was created with (type, CQs, SRQ, capabilities as created, sq_sig_all).
     * Every attribute of {@code out} is filled, whatever mask {@code out} recorded.
     *
     * @param out     the attributes to fill
     * @param initOut the init attributes to fill, or null
     * @return {@code out}
     */
    QpAttr query(QpAttr out, QpInitAttr initOut);

    /**
     * {@code ibv_query_qp} without the init attributes: fills and returns {@code out}.
     *
     * @param out the attributes to fill
     * @return {@code out}
     */
    default QpAttr query(QpAttr out) {
        return query(out, null);
    }

    /**
     * {@code ibv_query_qp} into a new {@link QpAttr}.
     *
     * @return the QP's current attributes
     */
    default QpAttr query() {
        return query(new QpAttr());
    }

    /**
     * The init attributes half of {@code ibv_query_qp}, in a new {@link QpInitAttr}.
     *
     * @return the attributes the QP was created with
     */
    default QpInitAttr queryInitAttr() {
        QpInitAttr init = new QpInitAttr();
        query(new QpAttr(), init);
        return init;
    }

    /**
     * The capabilities the QP was created with ({@code ibv_qp_init_attr.cap} as {@code ibv_create_qp}
     * returns it): at least the requested ones (S-QP-1).
     *
     * @return the capabilities (do not modify)
     */
    QpCap cap();

    /**
     * {@code ibv_post_send} of a chain of work requests. Throws {@link PostException} naming the
     * first request not posted: EINVAL (wrong state, too many SGEs, inline too long, unaligned atomic,
     * bad opcode for the QP type), ENOMEM (send queue full), S-POST-1..3. A request that is refused
     * here never completes; one that is posted completes later on {@link #sendCq()} (if signaled, or if
     * it fails). The provider copies what it needs at post time: the request may be changed and posted
     * again at once. Allocates nothing.
     *
     * @param wr the first request of the chain ({@link SendWorkRequest#next()})
     * @throws PostException as described
     * @throws IllegalStateException if this QP, or the address handle of a UD request, is closed
     */
    void postSend(SendWorkRequest wr);

    /**
     * {@code ibv_post_recv} of a chain. Throws {@link PostException}: EINVAL (RESET state, too many
     * SGEs, QP uses an SRQ), ENOMEM (receive queue full). Receives may be posted from INIT on. Allocates
     * nothing.
     *
     * @param wr the first request of the chain ({@link RecvWorkRequest#next()})
     * @throws PostException as described, naming the first request not posted
     */
    void postRecv(RecvWorkRequest wr);

    /**
     * {@code ibv_attach_mcast}: this UD QP receives what is sent to QPN 0xFFFFFF with destination
     * {@code gid} (a multicast GID: {@code ff00::/8}, or IPv4-mapped 224.0.0.0/4). {@code lid} is kept
     * with the attachment, as uverbs keeps it (on RoCE it is otherwise unused). Attaching again with
     * the same GID and LID does nothing. EINVAL for a QP that is not UD or a GID that is not multicast;
     * ENOMEM past max_mcast_grp, max_mcast_qp_attach or max_total_mcast_qp_attach. A QP with
     * attachments cannot be closed (EBUSY) until they are detached, as with ibv_destroy_qp (S-UD-6).
     *
     * @param gid the multicast GID
     * @param lid the multicast LID (0 on RoCE)
     * @throws VerbsException EINVAL or ENOMEM as described
     */
    void attachMcast(Gid gid, int lid);

    /**
     * {@code ibv_detach_mcast}: ends an attachment made by {@link #attachMcast}.
     *
     * @param gid the multicast GID
     * @param lid the LID given when attaching
     * @throws VerbsException EINVAL if this QP is not attached to {@code gid} with {@code lid}
     */
    void detachMcast(Gid gid, int lid);
}
