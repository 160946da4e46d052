// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Queue pair attributes ({@code struct ibv_qp_attr}): the argument of {@link QueuePair#modify} (only
 * the fields named in the mask are read) and the result of {@link QueuePair#query}. A fresh one holds
 * nothing made up: like a zeroed C struct every number is 0, and what C would leave at an invalid zero
 * (the states, the path MTU) or a null pointer is null, meaning "not set". Mutable, fluent; not
 * thread safe.
 *
 * <p>The fluent setters also record which attributes were set ({@link #mask()}), so that
 * {@link QueuePair#modify(QpAttr)} needs no hand-made mask:
 * {@snippet :
 * qp.modify(new QpAttr().state(QpState.RTS).sqPsn(0).timeout(14).retryCnt(7).rnrRetry(7).maxRdAtomic(1));
 * }
 */
public final class QpAttr {
    public QpState qpState;
    public QpState curQpState;
    public Mtu pathMtu;
    public int qkey;
    /** 24-bit receive PSN. */
    public int rqPsn;
    /** 24-bit send PSN. */
    public int sqPsn;
    public int destQpNum;
    /** {@link Access} bits: which remote operations this QP accepts (REMOTE_WRITE/READ/ATOMIC). */
    public int qpAccessFlags;
    public QpCap cap = new QpCap();
    public AhAttr ahAttr;
    public int pkeyIndex;
    public boolean enSqdAsyncNotify;
    public boolean sqDraining;
    /** Outstanding RDMA READ/atomic requests this QP may issue (initiator depth). */
    public int maxRdAtomic;
    /** Incoming RDMA READ/atomic requests this QP accepts (responder resources). */
    public int maxDestRdAtomic;
    /** RNR NAK timer code 0..31 this QP advertises when it has no receive posted. */
    public int minRnrTimer;
    public int portNum;
    /** Local ACK timeout exponent: 4.096 us * 2^timeout, 0 = infinite. */
    public int timeout;
    /** 0..7 retransmissions after a timeout or a PSN sequence NAK. */
    public int retryCnt;
    /** 0..7 retries after an RNR NAK; 7 = infinite. */
    public int rnrRetry;

    private int mask;

    /**
     * The {@link QpAttrMask} bits of every attribute set through a fluent setter of this object since
     * it was made (or since {@link #clearMask()}): what {@link QueuePair#modify(QpAttr)} applies.
     * Assigning a public field directly does not record a bit.
     */
    public int mask() { return mask; }

    /** Forgets which attributes were set (the values stay); returns this. */
    public QpAttr clearMask() { mask = 0; return this; }

    public QpAttr state(QpState s) { qpState = s; mask |= QpAttrMask.STATE; return this; }
    /** The state the caller believes the QP is in ({@code IBV_QP_CUR_STATE}). */
    public QpAttr curState(QpState s) { curQpState = s; mask |= QpAttrMask.CUR_STATE; return this; }
    public QpAttr pathMtu(Mtu m) { pathMtu = m; mask |= QpAttrMask.PATH_MTU; return this; }
    public QpAttr qkey(int k) { qkey = k; mask |= QpAttrMask.QKEY; return this; }
    public QpAttr rqPsn(int p) { rqPsn = p; mask |= QpAttrMask.RQ_PSN; return this; }
    public QpAttr sqPsn(int p) { sqPsn = p; mask |= QpAttrMask.SQ_PSN; return this; }
    public QpAttr destQpNum(int n) { destQpNum = n; mask |= QpAttrMask.DEST_QPN; return this; }
    /** {@link Access} bits. */
    public QpAttr accessFlags(int a) { qpAccessFlags = a; mask |= QpAttrMask.ACCESS_FLAGS; return this; }
    public QpAttr ahAttr(AhAttr a) { ahAttr = a; mask |= QpAttrMask.AV; return this; }
    public QpAttr pkeyIndex(int i) { pkeyIndex = i; mask |= QpAttrMask.PKEY_INDEX; return this; }
    public QpAttr portNum(int p) { portNum = p; mask |= QpAttrMask.PORT; return this; }
    public QpAttr maxRdAtomic(int n) { maxRdAtomic = n; mask |= QpAttrMask.MAX_QP_RD_ATOMIC; return this; }
    public QpAttr maxDestRdAtomic(int n) { maxDestRdAtomic = n; mask |= QpAttrMask.MAX_DEST_RD_ATOMIC; return this; }
    public QpAttr minRnrTimer(int t) { minRnrTimer = t; mask |= QpAttrMask.MIN_RNR_TIMER; return this; }
    public QpAttr timeout(int t) { timeout = t; mask |= QpAttrMask.TIMEOUT; return this; }
    public QpAttr retryCnt(int n) { retryCnt = n; mask |= QpAttrMask.RETRY_CNT; return this; }
    public QpAttr rnrRetry(int n) { rnrRetry = n; mask |= QpAttrMask.RNR_RETRY; return this; }
    public QpAttr enSqdAsyncNotify(boolean b) {
        enSqdAsyncNotify = b;
        mask |= QpAttrMask.EN_SQD_ASYNC_NOTIFY;
        return this;
    }
    public QpAttr cap(QpCap c) { cap = c; mask |= QpAttrMask.CAP; return this; }
}
