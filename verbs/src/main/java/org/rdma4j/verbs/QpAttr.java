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
    /** {@code qp_state} ({@link QpAttrMask#STATE}): the state to move to; the state after a query. */
    public QpState qpState;
    /** {@code cur_qp_state} ({@link QpAttrMask#CUR_STATE}): the state the caller believes the QP is in. */
    public QpState curQpState;
    /**
     * {@code path_mtu} ({@link QpAttrMask#PATH_MTU}): the MTU of the path to the peer, at most the
     * port's active MTU (S-QP-5); RC and UC. UD uses the port's MTU (S-UD-2).
     */
    public Mtu pathMtu;
    /**
     * {@code qkey} ({@link QpAttrMask#QKEY}): the Q_Key of a UD QP; datagrams with another are dropped
     * (S-UD-3). A controlled Q_Key (bit 31 set) needs privilege (S-QP-10): EPERM unless the process
     * holds CAP_NET_RAW or the system's privileged-qkey mode is on (the kernel decides on the native
     * provider); always EPERM on the soft device.
     */
    public int qkey;
    /**
     * {@code rq_psn} ({@link QpAttrMask#RQ_PSN}): the 24-bit PSN the receive side expects first (the
     * peer's send PSN).
     */
    public int rqPsn;
    /** {@code sq_psn} ({@link QpAttrMask#SQ_PSN}): the 24-bit PSN of the first packet sent. */
    public int sqPsn;
    /** {@code dest_qp_num} ({@link QpAttrMask#DEST_QPN}): the peer's 24-bit QPN (RC, UC). */
    public int destQpNum;
    /**
     * {@code qp_access_flags} ({@link QpAttrMask#ACCESS_FLAGS}): {@link Access} bits, which remote
     * operations this QP accepts (REMOTE_WRITE/READ/ATOMIC; the region's rights are checked too).
     */
    public int qpAccessFlags;
    /** {@code cap} ({@link QpAttrMask#CAP}): the queue capacities; filled by a query. */
    public QpCap cap = new QpCap();
    /**
     * {@code ah_attr} ({@link QpAttrMask#AV}): the address vector of the peer (RC, UC); on RoCE it
     * needs a GRH (S-DEV-4).
     */
    public AhAttr ahAttr;
    /** {@code pkey_index} ({@link QpAttrMask#PKEY_INDEX}): the index of the QP's P_Key in the port's table. */
    public int pkeyIndex;
    /**
     * {@code en_sqd_async_notify} ({@link QpAttrMask#EN_SQD_ASYNC_NOTIFY}): with a move to SQD, raise
     * SQ_DRAINED once the send queue has drained (S-QP-6).
     */
    public boolean enSqdAsyncNotify;
    /** {@code sq_draining} (query only): true while a QP in SQD still has sends in flight. */
    public boolean sqDraining;
    /**
     * {@code max_rd_atomic} ({@link QpAttrMask#MAX_QP_RD_ATOMIC}): outstanding RDMA READ/atomic
     * requests this QP may issue (initiator depth), up to the device's {@code max_qp_rd_atom}.
     */
    public int maxRdAtomic;
    /**
     * {@code max_dest_rd_atomic} ({@link QpAttrMask#MAX_DEST_RD_ATOMIC}): incoming RDMA READ/atomic
     * requests this QP accepts (responder resources), up to the device's {@code max_qp_rd_atom}.
     */
    public int maxDestRdAtomic;
    /**
     * {@code min_rnr_timer} ({@link QpAttrMask#MIN_RNR_TIMER}): the RNR NAK timer code 0..31 this QP
     * advertises when it has no receive posted (IBTA table: 12 = 0.64 ms, 0 = 655 ms).
     */
    public int minRnrTimer;
    /** {@code port_num} ({@link QpAttrMask#PORT}): the port, from 1. */
    public int portNum;
    /**
     * {@code timeout} ({@link QpAttrMask#TIMEOUT}): the local ACK timeout exponent 0..31, meaning
     * 4.096 us * 2^timeout; 0 = infinite.
     */
    public int timeout;
    /** {@code retry_cnt} ({@link QpAttrMask#RETRY_CNT}): 0..7 retransmissions after a timeout or a PSN sequence NAK. */
    public int retryCnt;
    /** {@code rnr_retry} ({@link QpAttrMask#RNR_RETRY}): 0..7 retries after an RNR NAK; 7 = infinite. */
    public int rnrRetry;

    private int mask;

    /** Attributes with nothing set: numbers 0, states, MTU and address vector null, an empty {@link QpCap}. */
    public QpAttr() {
    }

    /**
     * The {@link QpAttrMask} bits of every attribute set through a fluent setter of this object since
     * it was made (or since {@link #clearMask()}): what {@link QueuePair#modify(QpAttr)} applies.
     * Assigning a public field directly does not record a bit.
     *
     * @return the {@link QpAttrMask} bits recorded
     */
    public int mask() { return mask; }

    /**
     * Forgets which attributes were set (the values stay), to reuse the object for another modify.
     *
     * @return this object
     */
    public QpAttr clearMask() { mask = 0; return this; }

    /**
     * Sets {@link #qpState} ({@code IBV_QP_STATE}) and records its mask bit.
     *
     * @param s the state to move to
     * @return this object
     */
    public QpAttr state(QpState s) { qpState = s; mask |= QpAttrMask.STATE; return this; }
    /**
     * Sets {@link #curQpState} ({@code IBV_QP_CUR_STATE}) and records its mask bit.
     *
     * @param s the state the caller believes the QP is in
     * @return this object
     */
    public QpAttr curState(QpState s) { curQpState = s; mask |= QpAttrMask.CUR_STATE; return this; }
    /**
     * Sets {@link #pathMtu} ({@code IBV_QP_PATH_MTU}) and records its mask bit.
     *
     * @param m the path MTU
     * @return this object
     */
    public QpAttr pathMtu(Mtu m) { pathMtu = m; mask |= QpAttrMask.PATH_MTU; return this; }
    /**
     * Sets {@link #qkey} ({@code IBV_QP_QKEY}) and records its mask bit.
     *
     * @param k the Q_Key
     * @return this object
     */
    public QpAttr qkey(int k) { qkey = k; mask |= QpAttrMask.QKEY; return this; }
    /**
     * Sets {@link #rqPsn} ({@code IBV_QP_RQ_PSN}) and records its mask bit.
     *
     * @param p the 24-bit receive PSN
     * @return this object
     */
    public QpAttr rqPsn(int p) { rqPsn = p; mask |= QpAttrMask.RQ_PSN; return this; }
    /**
     * Sets {@link #sqPsn} ({@code IBV_QP_SQ_PSN}) and records its mask bit.
     *
     * @param p the 24-bit send PSN
     * @return this object
     */
    public QpAttr sqPsn(int p) { sqPsn = p; mask |= QpAttrMask.SQ_PSN; return this; }
    /**
     * Sets {@link #destQpNum} ({@code IBV_QP_DEST_QPN}) and records its mask bit.
     *
     * @param n the peer's 24-bit QPN
     * @return this object
     */
    public QpAttr destQpNum(int n) { destQpNum = n; mask |= QpAttrMask.DEST_QPN; return this; }
    /**
     * Sets {@link #qpAccessFlags} ({@code IBV_QP_ACCESS_FLAGS}) and records its mask bit.
     *
     * @param a {@link Access} bits
     * @return this object
     */
    public QpAttr accessFlags(int a) { qpAccessFlags = a; mask |= QpAttrMask.ACCESS_FLAGS; return this; }
    /**
     * Sets {@link #ahAttr} ({@code IBV_QP_AV}) and records its mask bit.
     *
     * @param a the address vector of the peer
     * @return this object
     */
    public QpAttr ahAttr(AhAttr a) { ahAttr = a; mask |= QpAttrMask.AV; return this; }
    /**
     * Sets {@link #pkeyIndex} ({@code IBV_QP_PKEY_INDEX}) and records its mask bit.
     *
     * @param i the P_Key index
     * @return this object
     */
    public QpAttr pkeyIndex(int i) { pkeyIndex = i; mask |= QpAttrMask.PKEY_INDEX; return this; }
    /**
     * Sets {@link #portNum} ({@code IBV_QP_PORT}) and records its mask bit.
     *
     * @param p the port, from 1
     * @return this object
     */
    public QpAttr portNum(int p) { portNum = p; mask |= QpAttrMask.PORT; return this; }
    /**
     * Sets {@link #maxRdAtomic} ({@code IBV_QP_MAX_QP_RD_ATOMIC}) and records its mask bit.
     *
     * @param n the initiator depth
     * @return this object
     */
    public QpAttr maxRdAtomic(int n) { maxRdAtomic = n; mask |= QpAttrMask.MAX_QP_RD_ATOMIC; return this; }
    /**
     * Sets {@link #maxDestRdAtomic} ({@code IBV_QP_MAX_DEST_RD_ATOMIC}) and records its mask bit.
     *
     * @param n the responder resources
     * @return this object
     */
    public QpAttr maxDestRdAtomic(int n) { maxDestRdAtomic = n; mask |= QpAttrMask.MAX_DEST_RD_ATOMIC; return this; }
    /**
     * Sets {@link #minRnrTimer} ({@code IBV_QP_MIN_RNR_TIMER}) and records its mask bit.
     *
     * @param t the RNR NAK timer code, 0..31
     * @return this object
     */
    public QpAttr minRnrTimer(int t) { minRnrTimer = t; mask |= QpAttrMask.MIN_RNR_TIMER; return this; }
    /**
     * Sets {@link #timeout} ({@code IBV_QP_TIMEOUT}) and records its mask bit.
     *
     * @param t the ACK timeout exponent, 0..31
     * @return this object
     */
    public QpAttr timeout(int t) { timeout = t; mask |= QpAttrMask.TIMEOUT; return this; }
    /**
     * Sets {@link #retryCnt} ({@code IBV_QP_RETRY_CNT}) and records its mask bit.
     *
     * @param n the retry count, 0..7
     * @return this object
     */
    public QpAttr retryCnt(int n) { retryCnt = n; mask |= QpAttrMask.RETRY_CNT; return this; }
    /**
     * Sets {@link #rnrRetry} ({@code IBV_QP_RNR_RETRY}) and records its mask bit.
     *
     * @param n the RNR retry count, 0..7 (7 = infinite)
     * @return this object
     */
    public QpAttr rnrRetry(int n) { rnrRetry = n; mask |= QpAttrMask.RNR_RETRY; return this; }
    /**
     * Sets {@link #enSqdAsyncNotify} ({@code IBV_QP_EN_SQD_ASYNC_NOTIFY}) and records its mask bit.
     *
     * @param b whether to raise SQ_DRAINED
     * @return this object
     */
    public QpAttr enSqdAsyncNotify(boolean b) {
        enSqdAsyncNotify = b;
        mask |= QpAttrMask.EN_SQD_ASYNC_NOTIFY;
        return this;
    }
    /**
     * Sets {@link #cap} ({@code IBV_QP_CAP}) and records its mask bit.
     *
     * @param c the capacities
     * @return this object
     */
    public QpAttr cap(QpCap c) { cap = c; mask |= QpAttrMask.CAP; return this; }
}
