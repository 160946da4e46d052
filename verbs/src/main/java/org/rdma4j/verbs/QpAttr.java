package org.rdma4j.verbs;

/**
 * Queue pair attributes ({@code struct ibv_qp_attr}): the argument of {@link QueuePair#modify} (only
 * the fields named in the mask are read) and the result of {@link QueuePair#query}. A fresh one holds
 * nothing made up: like a zeroed C struct every number is 0, and what C would leave at an invalid zero
 * (the states, the path MTU) or a null pointer is null, meaning "not set". Mutable, fluent; not
 * thread safe.
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

    public QpAttr state(QpState s) { qpState = s; return this; }
    public QpAttr pathMtu(Mtu m) { pathMtu = m; return this; }
    public QpAttr qkey(int k) { qkey = k; return this; }
    public QpAttr rqPsn(int p) { rqPsn = p; return this; }
    public QpAttr sqPsn(int p) { sqPsn = p; return this; }
    public QpAttr destQpNum(int n) { destQpNum = n; return this; }
    public QpAttr accessFlags(int a) { qpAccessFlags = a; return this; }
    public QpAttr ahAttr(AhAttr a) { ahAttr = a; return this; }
    public QpAttr pkeyIndex(int i) { pkeyIndex = i; return this; }
    public QpAttr portNum(int p) { portNum = p; return this; }
    public QpAttr maxRdAtomic(int n) { maxRdAtomic = n; return this; }
    public QpAttr maxDestRdAtomic(int n) { maxDestRdAtomic = n; return this; }
    public QpAttr minRnrTimer(int t) { minRnrTimer = t; return this; }
    public QpAttr timeout(int t) { timeout = t; return this; }
    public QpAttr retryCnt(int n) { retryCnt = n; return this; }
    public QpAttr rnrRetry(int n) { rnrRetry = n; return this; }
    public QpAttr enSqdAsyncNotify(boolean b) { enSqdAsyncNotify = b; return this; }
    public QpAttr cap(QpCap c) { cap = c; return this; }
}
