// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * What {@link ProtectionDomain#createQp} needs ({@code struct ibv_qp_init_attr}). Mutable, fluent;
 * not thread safe.
 * {@snippet :
 * QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(64, 64, 2, 2, 64)));
 * }
 */
public final class QpInitAttr {
    /** {@code qp_type}: the transport type. */
    public QpType type;
    /** {@code send_cq}: where send completions go; of the same context. */
    public CompletionQueue sendCq;
    /** {@code recv_cq}: where receive completions go (may be {@link #sendCq}). */
    public CompletionQueue recvCq;
    /** {@code srq}: the SRQ receives come from, or null for a receive queue of the QP's own. */
    public SharedReceiveQueue srq;
    /**
     * {@code cap}: the capacities asked for; default 16 send and 16 receive WRs, 1 SGE each, no inline
     * data. The receive side is ignored with an SRQ.
     */
    public QpCap cap = new QpCap(16, 16, 1, 1, 0);
    /**
     * {@code sq_sig_all}: when set every send work request completes with a work completion
     * ({@link SendFlag#SIGNALED} is implied, S-SIG-1).
     */
    public boolean sqSigAll;

    /** Empty, e.g. for {@link QueuePair#query(QpAttr, QpInitAttr)} to fill. */
    public QpInitAttr() {
    }

    /**
     * The attributes of a QP of {@code type} completing on the given CQs, with the default capacities.
     *
     * @param type   the transport type
     * @param sendCq where send completions go
     * @param recvCq where receive completions go
     */
    public QpInitAttr(QpType type, CompletionQueue sendCq, CompletionQueue recvCq) {
        this.type = type;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
    }

    /**
     * Sets {@link #cap} (the object itself, not a copy).
     *
     * @param cap the capacities
     * @return this object
     */
    public QpInitAttr cap(QpCap cap) {
        this.cap = cap;
        return this;
    }

    /**
     * Sets {@link #srq}.
     *
     * @param srq the SRQ, or null
     * @return this object
     */
    public QpInitAttr srq(SharedReceiveQueue srq) {
        this.srq = srq;
        return this;
    }

    /**
     * Sets {@link #sqSigAll}.
     *
     * @param sqSigAll whether every send completes
     * @return this object
     */
    public QpInitAttr sqSigAll(boolean sqSigAll) {
        this.sqSigAll = sqSigAll;
        return this;
    }
}
