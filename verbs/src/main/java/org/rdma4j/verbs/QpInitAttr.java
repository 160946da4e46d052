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
    public QpType type;
    public CompletionQueue sendCq;
    public CompletionQueue recvCq;
    public SharedReceiveQueue srq;
    public QpCap cap = new QpCap(16, 16, 1, 1, 0);
    /** When set every send work request completes with a work completion (IBV_SEND_SIGNALED ignored). */
    public boolean sqSigAll;

    /** Empty, e.g. for {@link QueuePair#query(QpAttr, QpInitAttr)} to fill. */
    public QpInitAttr() {
    }

    public QpInitAttr(QpType type, CompletionQueue sendCq, CompletionQueue recvCq) {
        this.type = type;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
    }

    public QpInitAttr cap(QpCap cap) {
        this.cap = cap;
        return this;
    }

    public QpInitAttr srq(SharedReceiveQueue srq) {
        this.srq = srq;
        return this;
    }

    public QpInitAttr sqSigAll(boolean sqSigAll) {
        this.sqSigAll = sqSigAll;
        return this;
    }
}
