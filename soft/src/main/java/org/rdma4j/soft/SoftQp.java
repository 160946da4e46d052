// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.rdma4j.verbs.QpAttrMask.*;

import org.rdma4j.soft.engine.AsyncEventSink;
import org.rdma4j.soft.engine.QpEngine;
import org.rdma4j.soft.engine.RecvQueue;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractQueuePair;
import org.rdma4j.verbs.spi.QpAttrRanges;
import org.rdma4j.verbs.spi.QpTransitions;

/** A soft queue pair: control-path validation in front of a {@link QpEngine}. Posting is thread safe. */
final class SoftQp extends AbstractQueuePair<SoftPd, SoftCq, SoftSrq> {
    /** Bit 31 of a Q_Key: a controlled Q_Key, which only privileged consumers may set. */
    private static final int CONTROLLED_QKEY = 0x80000000;

    private final QpCap cap;
    private final boolean sqSigAll;
    final QpEngine engine;
    // The attributes as last modified, for query (guarded by this): fields, not a QpAttr with its own
    // QpCap, as 256k idle QPs keep them; the PSNs query reports are the engine's live ones.
    private Mtu pathMtu;
    private AhAttr ahAttr;
    private int qkey;
    private int destQpNum;
    private int accessFlags;
    private short pkeyIndex;
    private byte portNum;
    private boolean enSqdAsyncNotify;
    private byte maxRdAtomic;
    private byte maxDestRdAtomic;
    private byte minRnrTimer;
    private byte timeout;
    private byte retryCnt;
    private byte rnrRetry;
    /** Set once the QP is being destroyed: its async events are no longer queued. */
    volatile boolean dying;

    SoftQp(SoftPd pd, QpInitAttr init) {
        super(pd, init, SoftCq.class, SoftSrq.class);
        SoftContext ctx = pd.context();
        QpType type = type();
        SoftCq sendCq = sendCq();
        SoftCq recvCq = recvCq();
        SoftSrq srq = srq();
        QpCap c = init.cap == null ? new QpCap() : init.cap;
        QpAttrRanges.checkCap(c, srq == null, SoftLimits.MAX_QP_WR, SoftLimits.MAX_SGE, SoftLimits.MAX_INLINE);
        this.sqSigAll = init.sqSigAll;
        this.cap = new QpCap(Math.max(1, c.maxSendWr), srq == null ? Math.max(1, c.maxRecvWr) : 0,
                Math.max(1, c.maxSendSge), srq == null ? Math.max(1, c.maxRecvSge) : 0, c.maxInlineData);
        RecvQueue rq = srq != null ? srq.queue : new RecvQueue(cap.maxRecvWr, cap.maxRecvSge, false, null);
        AsyncEventSink events = t -> ctx.postEvent(AsyncEvent.ofQp(t, this));
        ctx.device.claim(ResourceLimits.Kind.QP, () -> uses(pd, sendCq, recvCq == sendCq ? null : recvCq, srq));
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

    @Override
    protected String describe() {
        QpEngine e = engine;
        return type() + (e == null ? " QP (being created)" : " QP 0x" + Integer.toHexString(e.qpn));
    }

    /** Multicast attachments as uverbs keeps them: (GID, LID) pairs (guarded by this). */
    /** Multicast groups (UD only): a list once the first is attached. */
    private java.util.List<McastAttachment> mcast = java.util.List.of();

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
            pd().context().hca.attachMcast(gid, engine, SoftLimits.MAX_MCAST_GRP, SoftLimits.MAX_TOTAL_MCAST_QP_ATTACH,
                    SoftLimits.MAX_MCAST_QP_ATTACH);
        }
        if (!(mcast instanceof java.util.ArrayList)) {
            mcast = new java.util.ArrayList<>();
        }
        mcast.add(a);
    }

    @Override
    public synchronized void detachMcast(Gid gid, int lid) {
        ensureOpen();
        checkMcast(gid);
        if (mcast.isEmpty() || !mcast.remove(new McastAttachment(gid, lid & 0xFFFF))) {
            throw new VerbsException(Errno.EINVAL, describe() + " is not attached to " + gid + " with LID " + lid);
        }
        if (mcast.stream().noneMatch(m -> m.gid().equals(gid))) {
            pd().context().hca.detachMcast(gid, engine);
        }
    }

    private void checkMcast(Gid gid) {
        if (type() != QpType.UD) {
            throw new VerbsException(Errno.EINVAL, "multicast needs a UD QP, not " + type());
        }
        if (gid == null || !gid.isMulticast()) {
            throw new VerbsException(Errno.EINVAL, gid + " is not a multicast GID");
        }
    }

    @Override
    protected int busyReason() {
        // As ibv_destroy_qp (uverbs): a QP still attached to multicast groups cannot be destroyed; nor,
        // where libibverbs would wait, one with an async event not acknowledged (S-LIFE-6).
        if (!mcast.isEmpty()) {
            return Errno.EBUSY;
        }
        return pd().context().refuseWhileUnacked(this, () -> dying = true);
    }

    @Override
    protected void destroy() {
        dying = true;
        engine.destroy();
        pd().context().purgeEvents(this);
        pd().context().forget(this);
        pd().context().device.release(ResourceLimits.Kind.QP);
    }

    @Override
    public int qpn() {
        return engine.qpn;
    }

    @Override
    public QpState state() {
        return engine.state();
    }

    @Override
    public QpCap cap() {
        return cap.copy();
    }

    @Override
    public synchronized void modify(QpAttr attr, int mask) {
        checkModify(attr);
        if ((mask & QKEY) != 0 && (attr.qkey & CONTROLLED_QKEY) != 0) {
            // uverbs modify_qp: a controlled Q_Key needs privilege, and soft treats every caller as an
            // unprivileged process (no CAP_NET_RAW, privileged_qkey mode off)
            throw new VerbsException(Errno.EPERM, "Q_Key 0x" + Integer.toHexString(attr.qkey)
                    + " is a controlled Q_Key (bit 31): only a privileged process may set one");
        }
        QpState cur = engine.state();
        if ((mask & CUR_STATE) != 0 && attr.curQpState != cur) {
            throw new VerbsException(Errno.EINVAL, QpTransitions.checkCurrentState(attr.curQpState, cur));
        }
        QpState next = (mask & STATE) != 0 ? attr.qpState : cur;
        if (next == null) {
            throw new VerbsException(Errno.EINVAL, "no target state");
        }
        String why = QpTransitions.check(type(), cur, next, mask);
        if (why != null) {
            throw new VerbsException(Errno.EINVAL, why);
        }
        if ((mask & STATE) != 0 && cur == QpState.SQD && next != QpState.ERR && next != QpState.RESET
                && engine.sqDraining()) {
            // rxe_qp_chk_attr: the send queue must have drained before the QP leaves (or re-enters) SQD
            throw new VerbsException(Errno.EINVAL, "the send queue is still draining: wait for SQ_DRAINED"
                    + " (or sq_draining false in query) before moving to " + next);
        }
        SoftContext ctx = pd().context();
        Gid dgid = null;
        Gid sgid = null;
        GlobalRoute grh = null;
        QpAttrRanges.check(attr, mask, 1, SoftLimits.MAX_PKEYS, SoftLimits.MAX_QP_RD_ATOM);
        if ((mask & AV) != 0) {
            SoftAh.checkAv(ctx, attr.ahAttr);
            dgid = attr.ahAttr.grh().dgid();
            sgid = ctx.hca.gid(attr.ahAttr.grh().sgidIndex());
            grh = attr.ahAttr.grh();
        }
        remember(attr, mask);
        engine.modify(new QpEngine.Change(next, mask, attr.pathMtu == null ? 0 : attr.pathMtu.bytes(),
                attr.destQpNum, dgid, sgid, grh, attr.qkey, attr.qpAccessFlags, attr.rqPsn, attr.sqPsn, attr.timeout,
                attr.retryCnt, attr.rnrRetry, attr.minRnrTimer, attr.maxRdAtomic, attr.maxDestRdAtomic,
                attr.enSqdAsyncNotify));
    }

    private void remember(QpAttr a, int mask) {
        if ((mask & PATH_MTU) != 0) {
            pathMtu = a.pathMtu;
        }
        if ((mask & QKEY) != 0) {
            qkey = a.qkey;
        }
        if ((mask & DEST_QPN) != 0) {
            destQpNum = a.destQpNum;
        }
        if ((mask & ACCESS_FLAGS) != 0) {
            accessFlags = a.qpAccessFlags;
        }
        if ((mask & AV) != 0) {
            ahAttr = a.ahAttr;
        }
        if ((mask & PKEY_INDEX) != 0) {
            pkeyIndex = (short) a.pkeyIndex;
        }
        if ((mask & PORT) != 0) {
            portNum = (byte) a.portNum;
        }
        if ((mask & EN_SQD_ASYNC_NOTIFY) != 0) {
            enSqdAsyncNotify = a.enSqdAsyncNotify;
        }
        if ((mask & MAX_QP_RD_ATOMIC) != 0) {
            maxRdAtomic = (byte) a.maxRdAtomic;
        }
        if ((mask & MAX_DEST_RD_ATOMIC) != 0) {
            maxDestRdAtomic = (byte) a.maxDestRdAtomic;
        }
        if ((mask & MIN_RNR_TIMER) != 0) {
            minRnrTimer = (byte) a.minRnrTimer;
        }
        if ((mask & TIMEOUT) != 0) {
            timeout = (byte) a.timeout;
        }
        if ((mask & RETRY_CNT) != 0) {
            retryCnt = (byte) a.retryCnt;
        }
        if ((mask & RNR_RETRY) != 0) {
            rnrRetry = (byte) a.rnrRetry;
        }
    }

    @Override
    public synchronized QpAttr query(QpAttr out, QpInitAttr initOut) {
        ensureOpen();
        if (initOut != null) {
            reportInit(initOut, cap.copy(), sqSigAll);
        }
        QpState s = engine.state();
        out.qpState = s;
        out.curQpState = s;
        out.pathMtu = pathMtu;
        out.qkey = qkey;
        // the live PSNs, as rxe_qp_to_attr reports them: the responder's expected PSN and the PSN of the
        // requester's next packet, not the values modify last wrote
        long psns = engine.livePsns();
        out.rqPsn = (int) (psns >>> 32);
        out.sqPsn = (int) psns;
        out.destQpNum = destQpNum;
        out.qpAccessFlags = accessFlags;
        out.cap = cap.copy();
        out.ahAttr = ahAttr;
        out.pkeyIndex = pkeyIndex & 0xFFFF;
        out.enSqdAsyncNotify = enSqdAsyncNotify;
        out.sqDraining = engine.sqDraining();
        out.maxRdAtomic = maxRdAtomic;
        out.maxDestRdAtomic = maxDestRdAtomic;
        out.minRnrTimer = minRnrTimer;
        out.portNum = portNum & 0xFF;
        out.timeout = timeout;
        out.retryCnt = retryCnt;
        out.rnrRetry = rnrRetry;
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
