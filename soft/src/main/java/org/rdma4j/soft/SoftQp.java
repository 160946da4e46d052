package org.rdma4j.soft;

import static org.rdma4j.verbs.QpAttrMask.*;

import org.rdma4j.soft.engine.AsyncEventSink;
import org.rdma4j.soft.engine.QpEngine;
import org.rdma4j.soft.engine.RecvQueue;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractResource;
import org.rdma4j.verbs.spi.QpTransitions;

/** A soft queue pair: control-path validation in front of a {@link QpEngine}. Posting is thread safe. */
final class SoftQp extends AbstractResource implements QueuePair {
    /** Bit 31 of a Q_Key: a controlled Q_Key, which only privileged consumers may set. */
    private static final int CONTROLLED_QKEY = 0x80000000;
    private static final int QP_ACCESS_BITS = Access.LOCAL_WRITE | Access.REMOTE_WRITE
            | Access.REMOTE_READ | Access.REMOTE_ATOMIC | Access.MW_BIND;

    private final SoftPd pd;
    private final QpType type;
    private final SoftCq sendCq;
    private final SoftCq recvCq;
    private final SoftSrq srq;
    private final QpCap cap;
    private final boolean sqSigAll;
    final QpEngine engine;
    /** The attributes as last modified, for query. */
    private final QpAttr attrs = new QpAttr();
    /** Set once the QP is being destroyed: its async events are no longer queued. */
    volatile boolean dying;

    SoftQp(SoftPd pd, QpInitAttr init) {
        if (init == null || init.type == null) {
            throw new VerbsException(Errno.EINVAL, "no QP type");
        }
        SoftContext ctx = pd.context;
        this.pd = pd;
        this.type = init.type;
        this.sendCq = cq(ctx, init.sendCq, "send");
        this.recvCq = cq(ctx, init.recvCq, "receive");
        if (init.srq != null && !(init.srq instanceof SoftSrq)) {
            throw new VerbsException(Errno.EINVAL, "the SRQ belongs to another provider");
        }
        this.srq = (SoftSrq) init.srq;
        QpCap c = init.cap == null ? new QpCap() : init.cap;
        checkCap("max_send_wr", c.maxSendWr, SoftLimits.MAX_QP_WR);
        checkCap("max_send_sge", c.maxSendSge, SoftLimits.MAX_SGE);
        checkCap("max_inline_data", c.maxInlineData, SoftLimits.MAX_INLINE);
        if (srq == null) {
            checkCap("max_recv_wr", c.maxRecvWr, SoftLimits.MAX_QP_WR);
            checkCap("max_recv_sge", c.maxRecvSge, SoftLimits.MAX_SGE);
        }
        this.sqSigAll = init.sqSigAll;
        this.cap = new QpCap(Math.max(1, c.maxSendWr), srq == null ? Math.max(1, c.maxRecvWr) : 0,
                Math.max(1, c.maxSendSge), srq == null ? Math.max(1, c.maxRecvSge) : 0, c.maxInlineData);
        RecvQueue rq = srq != null ? srq.queue : new RecvQueue(cap.maxRecvWr, cap.maxRecvSge, false, null);
        AsyncEventSink events = t -> ctx.postEvent(AsyncEvent.ofQp(t, this));
        attrs.cap = cap.copy();
        ctx.device.claim(ResourceLimits.Kind.QP);
        try {
            uses(pd, sendCq, recvCq == sendCq ? null : recvCq, srq);
        } catch (RuntimeException e) {
            ctx.device.release(ResourceLimits.Kind.QP);
            throw e;
        }
        // The QP number is taken (and packets can reach the QP) only once every parent is held.
        QpEngine e;
        try {
            e = new QpEngine(ctx.hca, new QpEngine.Config(type, pd, sendCq.ring, recvCq.ring, rq, srq != null,
                    cap.maxSendWr, cap.maxSendSge, cap.maxInlineData, init.sqSigAll, events));
        } catch (RuntimeException ex) {
            abandon();
            ctx.device.release(ResourceLimits.Kind.QP);
            throw ex;
        }
        this.engine = e;
    }

    private static SoftCq cq(SoftContext ctx, CompletionQueue cq, String which) {
        if (!(cq instanceof SoftCq s) || s.context != ctx) {
            throw new VerbsException(Errno.EINVAL, "the " + which + " CQ is missing or belongs to another context");
        }
        s.ensureOpen();
        return s;
    }

    private static void checkCap(String name, int value, int max) {
        if (value < 0 || value > max) {
            throw new VerbsException(Errno.EINVAL, name + " " + Integer.toUnsignedString(value)
                    + " exceeds the device maximum " + max);
        }
    }

    @Override
    protected String describe() {
        QpEngine e = engine;
        return type + (e == null ? " QP (being created)" : " QP 0x" + Integer.toHexString(e.qpn));
    }

    /** Multicast attachments as uverbs keeps them: (GID, LID) pairs (guarded by this). */
    private final java.util.List<McastAttachment> mcast = new java.util.ArrayList<>();

    private record McastAttachment(Gid gid, int lid) {
    }

    @Override
    public synchronized void attachMcast(Gid gid, int lid) {
        ensureOpen();
        checkMcast(gid);
        McastAttachment a = new McastAttachment(gid, lid & 0xFFFF);
        if (mcast.contains(a)) {
            return;
        }
        if (mcast.stream().noneMatch(m -> m.gid().equals(gid))) {
            pd.context.hca.attachMcast(gid, engine, SoftLimits.MAX_MCAST_GRP, SoftLimits.MAX_TOTAL_MCAST_QP_ATTACH,
                    SoftLimits.MAX_MCAST_QP_ATTACH);
        }
        mcast.add(a);
    }

    @Override
    public synchronized void detachMcast(Gid gid, int lid) {
        ensureOpen();
        checkMcast(gid);
        if (!mcast.remove(new McastAttachment(gid, lid & 0xFFFF))) {
            throw new VerbsException(Errno.EINVAL, describe() + " is not attached to " + gid + " with LID " + lid);
        }
        if (mcast.stream().noneMatch(m -> m.gid().equals(gid))) {
            pd.context.hca.detachMcast(gid, engine);
        }
    }

    private void checkMcast(Gid gid) {
        if (type != QpType.UD) {
            throw new VerbsException(Errno.EINVAL, "multicast needs a UD QP, not " + type);
        }
        if (gid == null || !gid.isMulticast()) {
            throw new VerbsException(Errno.EINVAL, gid + " is not a multicast GID");
        }
    }

    @Override
    protected int busyReason() {
        // As ibv_destroy_qp (uverbs): a QP still attached to multicast groups cannot be destroyed.
        return mcast.isEmpty() ? 0 : Errno.EBUSY;
    }

    @Override
    protected void destroy() {
        dying = true;
        engine.destroy();
        pd.context.purgeEvents(this);
        pd.context.device.release(ResourceLimits.Kind.QP);
    }

    @Override
    public Context context() {
        return pd.context;
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public int qpn() {
        return engine.qpn;
    }

    @Override
    public QpType type() {
        return type;
    }

    @Override
    public QpState state() {
        return engine.state();
    }

    @Override
    public CompletionQueue sendCq() {
        return sendCq;
    }

    @Override
    public CompletionQueue recvCq() {
        return recvCq;
    }

    @Override
    public SharedReceiveQueue srq() {
        return srq;
    }

    @Override
    public QpCap cap() {
        return cap.copy();
    }

    @Override
    public synchronized void modify(QpAttr attr, int mask) {
        ensureOpen();
        if (attr == null) {
            throw new VerbsException(Errno.EINVAL, "no attributes");
        }
        if ((mask & QKEY) != 0 && (attr.qkey & CONTROLLED_QKEY) != 0) {
            // uverbs modify_qp: a controlled Q_Key needs privilege, and soft treats every caller as an
            // unprivileged process (no CAP_NET_RAW, privileged_qkey mode off)
            throw new VerbsException(Errno.EPERM, "Q_Key 0x" + Integer.toHexString(attr.qkey)
                    + " is a controlled Q_Key (bit 31): only a privileged process may set one");
        }
        QpState cur = engine.state();
        if ((mask & CUR_STATE) != 0 && attr.curQpState != cur) {
            throw new VerbsException(Errno.EINVAL, "cur_qp_state " + attr.curQpState + " but the QP is in " + cur);
        }
        QpState next = (mask & STATE) != 0 ? attr.qpState : cur;
        if (next == null) {
            throw new VerbsException(Errno.EINVAL, "no target state");
        }
        String why = QpTransitions.check(type, cur, next, mask);
        if (why != null) {
            throw new VerbsException(Errno.EINVAL, why);
        }
        if ((mask & STATE) != 0 && cur == QpState.SQD && next != QpState.ERR && next != QpState.RESET
                && engine.sqDraining()) {
            // rxe_qp_chk_attr: the send queue must have drained before the QP leaves (or re-enters) SQD
            throw new VerbsException(Errno.EINVAL, "the send queue is still draining: wait for SQ_DRAINED"
                    + " (or sq_draining false in query) before moving to " + next);
        }
        SoftContext ctx = pd.context;
        Gid dgid = null;
        Gid sgid = null;
        GlobalRoute grh = null;
        if ((mask & PORT) != 0 && attr.portNum != 1) {
            throw new VerbsException(Errno.EINVAL, "port " + attr.portNum + " does not exist");
        }
        if ((mask & PKEY_INDEX) != 0 && (attr.pkeyIndex < 0 || attr.pkeyIndex >= SoftLimits.MAX_PKEYS)) {
            throw new VerbsException(Errno.EINVAL, "P_Key index " + attr.pkeyIndex + " is outside the table");
        }
        if ((mask & ACCESS_FLAGS) != 0 && (attr.qpAccessFlags & ~QP_ACCESS_BITS) != 0) {
            throw new VerbsException(Errno.EINVAL, "QP access flags 0x" + Integer.toHexString(attr.qpAccessFlags));
        }
        if ((mask & PATH_MTU) != 0 && attr.pathMtu == null) {
            throw new VerbsException(Errno.EINVAL, "no path MTU");
        }
        if ((mask & AV) != 0) {
            SoftAh.checkAv(ctx, attr.ahAttr);
            dgid = attr.ahAttr.grh().dgid();
            sgid = ctx.hca.gid(attr.ahAttr.grh().sgidIndex());
            grh = attr.ahAttr.grh();
        }
        if ((mask & DEST_QPN) != 0 && (attr.destQpNum & ~0xFFFFFF) != 0) {
            throw new VerbsException(Errno.EINVAL, "dest_qp_num 0x" + Integer.toHexString(attr.destQpNum)
                    + " is not a 24-bit QPN");
        }
        range(mask, TIMEOUT, "timeout", attr.timeout, 31);
        range(mask, RETRY_CNT, "retry_cnt", attr.retryCnt, 7);
        range(mask, RNR_RETRY, "rnr_retry", attr.rnrRetry, 7);
        range(mask, MIN_RNR_TIMER, "min_rnr_timer", attr.minRnrTimer, 31);
        range(mask, MAX_QP_RD_ATOMIC, "max_rd_atomic", attr.maxRdAtomic, SoftLimits.MAX_QP_RD_ATOM);
        range(mask, MAX_DEST_RD_ATOMIC, "max_dest_rd_atomic", attr.maxDestRdAtomic, SoftLimits.MAX_QP_RD_ATOM);
        remember(attr, mask);
        engine.modify(new QpEngine.Change(next, mask, attr.pathMtu == null ? 0 : attr.pathMtu.bytes(),
                attr.destQpNum, dgid, sgid, grh, attr.qkey, attr.qpAccessFlags, attr.rqPsn, attr.sqPsn, attr.timeout,
                attr.retryCnt, attr.rnrRetry, attr.minRnrTimer, attr.maxRdAtomic, attr.maxDestRdAtomic,
                attr.enSqdAsyncNotify));
    }

    private static void range(int mask, int bit, String name, int value, int max) {
        if ((mask & bit) != 0 && (value < 0 || value > max)) {
            throw new VerbsException(Errno.EINVAL, name + " " + value + " is outside 0.." + max);
        }
    }

    private void remember(QpAttr a, int mask) {
        if ((mask & PATH_MTU) != 0) {
            attrs.pathMtu = a.pathMtu;
        }
        if ((mask & QKEY) != 0) {
            attrs.qkey = a.qkey;
        }
        if ((mask & RQ_PSN) != 0) {
            attrs.rqPsn = a.rqPsn & 0xFFFFFF;
        }
        if ((mask & SQ_PSN) != 0) {
            attrs.sqPsn = a.sqPsn & 0xFFFFFF;
        }
        if ((mask & DEST_QPN) != 0) {
            attrs.destQpNum = a.destQpNum;
        }
        if ((mask & ACCESS_FLAGS) != 0) {
            attrs.qpAccessFlags = a.qpAccessFlags;
        }
        if ((mask & AV) != 0) {
            attrs.ahAttr = a.ahAttr;
        }
        if ((mask & PKEY_INDEX) != 0) {
            attrs.pkeyIndex = a.pkeyIndex;
        }
        if ((mask & PORT) != 0) {
            attrs.portNum = a.portNum;
        }
        if ((mask & EN_SQD_ASYNC_NOTIFY) != 0) {
            attrs.enSqdAsyncNotify = a.enSqdAsyncNotify;
        }
        if ((mask & MAX_QP_RD_ATOMIC) != 0) {
            attrs.maxRdAtomic = a.maxRdAtomic;
        }
        if ((mask & MAX_DEST_RD_ATOMIC) != 0) {
            attrs.maxDestRdAtomic = a.maxDestRdAtomic;
        }
        if ((mask & MIN_RNR_TIMER) != 0) {
            attrs.minRnrTimer = a.minRnrTimer;
        }
        if ((mask & TIMEOUT) != 0) {
            attrs.timeout = a.timeout;
        }
        if ((mask & RETRY_CNT) != 0) {
            attrs.retryCnt = a.retryCnt;
        }
        if ((mask & RNR_RETRY) != 0) {
            attrs.rnrRetry = a.rnrRetry;
        }
    }

    @Override
    public synchronized QpAttr query(QpAttr out, QpInitAttr initOut) {
        ensureOpen();
        if (initOut != null) {
            initOut.type = type;
            initOut.sendCq = sendCq;
            initOut.recvCq = recvCq;
            initOut.srq = srq;
            initOut.cap = cap.copy();
            initOut.sqSigAll = sqSigAll;
        }
        QpState s = engine.state();
        out.qpState = s;
        out.curQpState = s;
        out.pathMtu = attrs.pathMtu;
        out.qkey = attrs.qkey;
        // the live PSNs, as rxe_qp_to_attr reports them: the responder's expected PSN and the PSN of the
        // requester's next packet, not the values modify last wrote
        long psns = engine.livePsns();
        out.rqPsn = (int) (psns >>> 32);
        out.sqPsn = (int) psns;
        out.destQpNum = attrs.destQpNum;
        out.qpAccessFlags = attrs.qpAccessFlags;
        out.cap = cap.copy();
        out.ahAttr = attrs.ahAttr;
        out.pkeyIndex = attrs.pkeyIndex;
        out.enSqdAsyncNotify = attrs.enSqdAsyncNotify;
        out.sqDraining = engine.sqDraining();
        out.maxRdAtomic = attrs.maxRdAtomic;
        out.maxDestRdAtomic = attrs.maxDestRdAtomic;
        out.minRnrTimer = attrs.minRnrTimer;
        out.portNum = attrs.portNum;
        out.timeout = attrs.timeout;
        out.retryCnt = attrs.retryCnt;
        out.rnrRetry = attrs.rnrRetry;
        return out;
    }

    @Override
    public void postSend(SendWorkRequest wr) {
        ensureOpen();
        engine.postSend(wr);
    }

    @Override
    public void postRecv(RecvWorkRequest wr) {
        ensureOpen();
        engine.postRecv(wr);
    }
}
