// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_QP;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_QP_ATTR;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_QP_INIT_ATTR;
import static org.rdma4j.nativeverbs.abi.QpLayouts.QP_QP_NUM;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.rdma4j.nativeverbs.abi.CmLayouts;
import org.rdma4j.nativeverbs.abi.IbvQp;
import org.rdma4j.nativeverbs.abi.Rdmacm;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractQueuePair;
import org.rdma4j.verbs.spi.QpTransitions;
import org.rdma4j.verbs.spi.ffm.ErrnoCapture;

/**
 * A libibverbs queue pair ({@code ibv_create_qp}). {@link #postSend}/{@link #postRecv} encode the Java
 * work requests into native arrays this QP keeps and call the provider's {@code post_send} /
 * {@code post_recv} through the context's ops, as verbs.h does: nothing is allocated per post. The
 * attributes pass the verbs SPI's ranges ({@link org.rdma4j.verbs.spi.QpAttrRanges}, as on every
 * provider) and then go to {@code ibv_modify_qp} as given, so the kernel and the provider decide the
 * rest, with their errnos, as C would be told. Posting is thread safe (posts to one queue are serialized); close waits
 * for a post in progress and then refuses new ones, so a racing post gets an error, never a freed QP.
 */
final class NativeQueuePair extends AbstractQueuePair<NativeProtectionDomain, NativeCompletionQueue,
        NativeSharedReceiveQueue> implements NativeHandle {
    private static final long INIT_SEND_CQ = offset(IBV_QP_INIT_ATTR, "send_cq");
    private static final long INIT_RECV_CQ = offset(IBV_QP_INIT_ATTR, "recv_cq");
    private static final long INIT_SRQ = offset(IBV_QP_INIT_ATTR, "srq");
    private static final long INIT_CAP = offset(IBV_QP_INIT_ATTR, "cap");
    private static final long INIT_QP_TYPE = offset(IBV_QP_INIT_ATTR, "qp_type");
    private static final long INIT_SQ_SIG_ALL = offset(IBV_QP_INIT_ATTR, "sq_sig_all");
    private static final long CAP_MAX_SEND_WR = offset(IBV_QP_INIT_ATTR, "cap.max_send_wr");
    private static final long CAP_MAX_RECV_WR = offset(IBV_QP_INIT_ATTR, "cap.max_recv_wr");
    private static final long CAP_MAX_SEND_SGE = offset(IBV_QP_INIT_ATTR, "cap.max_send_sge");
    private static final long CAP_MAX_RECV_SGE = offset(IBV_QP_INIT_ATTR, "cap.max_recv_sge");
    private static final long CAP_MAX_INLINE = offset(IBV_QP_INIT_ATTR, "cap.max_inline_data");
    /** Every bit of ibv_qp_attr_mask rdma4j uses, for a full query. */
    private static final int QUERY_ALL = (1 << 21) - 1;
    private static final long CM_ID_QP = offset(CmLayouts.rdma_cm_id, "qp");

    private final NativeContext context;
    private final QpCap cap;
    private final MemorySegment qp;
    /** {@code qp.address()}, what the posts pass. */
    private final long qpAddress;
    private final int qpn;
    private final MemorySegment postSendFn;
    private final MemorySegment postRecvFn;
    private final SendWrEncoder sendWrs;
    private final RecvWrEncoder recvWrs;
    private final Object recvLock = new Object();
    /** Set under both post locks once the QP is being destroyed. */
    private boolean dead;
    /** Multicast attachments (GID, LID) as uverbs keeps them; guarded by this. */
    private final List<Object> mcast = new ArrayList<>();
    /** The {@code struct rdma_cm_id *} whose {@code qp} this is, or null. */
    private final MemorySegment cmId;

    NativeQueuePair(NativeProtectionDomain pd, QpInitAttr init) {
        this(pd, init, null);
    }

    /**
     * A QP made by {@code rdma_create_qp(cmId, pd, attr)} when {@code cmId} is not null (librdmacm then
     * moves it through its states and keeps it in {@code cm_id->qp}), else by ibv_create_qp. Destroying
     * it clears {@code cm_id->qp} first, as rdma_destroy_qp does, so librdmacm never touches a freed QP.
     */
    NativeQueuePair(NativeProtectionDomain pd, QpInitAttr init, MemorySegment cmId) {
        super(pd, init, NativeCompletionQueue.class, NativeSharedReceiveQueue.class);
        this.cmId = cmId;
        this.context = pd.context();
        QpType type = type();
        NativeCompletionQueue sendCq = sendCq();
        NativeCompletionQueue recvCq = recvCq();
        NativeSharedReceiveQueue srq = srq();
        QpCap want = init.cap == null ? new QpCap() : init.cap;
        context.limits().checkCreate(want, srq == null); // the SPI's rules, as on every provider
        uses(pd, sendCq, recvCq == sendCq ? null : recvCq, srq);
        MemorySegment created;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IBV_QP_INIT_ATTR);
            attr.set(ValueLayout.ADDRESS, INIT_SEND_CQ, sendCq.handle());
            attr.set(ValueLayout.ADDRESS, INIT_RECV_CQ, recvCq.handle());
            attr.set(ValueLayout.ADDRESS, INIT_SRQ, srq == null ? MemorySegment.NULL : srq.handle());
            attr.set(ValueLayout.JAVA_INT, CAP_MAX_SEND_WR, want.maxSendWr);
            attr.set(ValueLayout.JAVA_INT, CAP_MAX_RECV_WR, want.maxRecvWr);
            attr.set(ValueLayout.JAVA_INT, CAP_MAX_SEND_SGE, want.maxSendSge);
            attr.set(ValueLayout.JAVA_INT, CAP_MAX_RECV_SGE, want.maxRecvSge);
            attr.set(ValueLayout.JAVA_INT, CAP_MAX_INLINE, want.maxInlineData);
            attr.set(ValueLayout.JAVA_INT, INIT_QP_TYPE, type.value());
            attr.set(ValueLayout.JAVA_INT, INIT_SQ_SIG_ALL, init.sqSigAll ? 1 : 0);
            created = Downcalls.createAs(() -> (cmId == null ? "ibv_create_qp(" : "rdma_create_qp(") + type + ", " + want
                    + ") on " + context.device().name() + " failed", this::abandon, e -> {
                        if (cmId == null) {
                            return (MemorySegment) IbvQp.CREATE_QP.invokeExact(e, pd.handle(), attr);
                        }
                        int rc = (int) Rdmacm.rdma_create_qp.invokeExact(e, cmId, pd.handle(), attr);
                        return rc == 0 ? cmId.get(ValueLayout.ADDRESS, CM_ID_QP) : MemorySegment.NULL;
                    });
            // ibv_create_qp writes back the capacities the QP really has
            this.cap = new QpCap(attr.get(ValueLayout.JAVA_INT, CAP_MAX_SEND_WR),
                    attr.get(ValueLayout.JAVA_INT, CAP_MAX_RECV_WR), attr.get(ValueLayout.JAVA_INT, CAP_MAX_SEND_SGE),
                    attr.get(ValueLayout.JAVA_INT, CAP_MAX_RECV_SGE), attr.get(ValueLayout.JAVA_INT, CAP_MAX_INLINE));
        }
        this.qp = created.reinterpret(IBV_QP.byteSize());
        this.qpAddress = qp.address();
        this.qpn = qp.get(ValueLayout.JAVA_INT, QP_QP_NUM);
        this.postSendFn = ContextOps.function(context, ContextOps.POST_SEND);
        this.postRecvFn = ContextOps.function(context, ContextOps.POST_RECV);
        this.sendWrs = new SendWrEncoder(type, Math.max(cap.maxSendSge, want.maxSendSge),
                Math.max(cap.maxInlineData, want.maxInlineData));
        this.recvWrs = srq == null ? new RecvWrEncoder(Math.max(cap.maxRecvSge, want.maxRecvSge)) : null;
        context.track(qp, this);
    }

    /** The {@code struct ibv_qp *}. */
    @Override
    public MemorySegment handle() {
        return qp;
    }

    @Override
    protected String describe() {
        return type() + " QP 0x" + Integer.toHexString(qpn) + " of " + context.device().name();
    }

    @Override
    protected int busyReason() {
        // as uverbs: a QP still attached to multicast groups cannot be destroyed; and libibverbs'
        // ibv_destroy_qp would wait forever for async events of this QP not yet acknowledged
        synchronized (this) {
            return mcast.isEmpty() && context.unackedAsyncEvents(this) == 0 ? 0 : Errno.EBUSY;
        }
    }

    @Override
    protected void destroy() {
        setDead(true);
        if (cmId != null) {
            cmId.set(ValueLayout.ADDRESS, CM_ID_QP, MemorySegment.NULL);
        }
        try {
            Downcalls.checkAs(() -> "ibv_destroy_qp of " + describe() + " failed",
                    e -> (int) IbvQp.DESTROY_QP.invokeExact(e, qp));
        } catch (RuntimeException | Error e) {
            setDead(false);
            if (cmId != null) {
                cmId.set(ValueLayout.ADDRESS, CM_ID_QP, qp);
            }
            throw e;
        }
        context.untrack(qp);
        sendWrs.close();
        if (recvWrs != null) {
            recvWrs.close();
        }
    }

    private void setDead(boolean d) {
        synchronized (sendWrs) {
            synchronized (recvLock) {
                dead = d;
            }
        }
    }

    @Override
    public int qpn() {
        return qpn;
    }

    @Override
    public QpState state() {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IBV_QP_ATTR);
            MemorySegment init = a.allocate(IBV_QP_INIT_ATTR);
            query(attr, QpAttrMask.STATE, init);
            return QpState.of(attr.get(ValueLayout.JAVA_INT, QpAttrCodec.QP_STATE));
        }
    }

    @Override
    public QpCap cap() {
        return cap.copy();
    }

    @Override
    public void modify(QpAttr attr, int mask) {
        checkModify(attr);
        if ((mask & QpAttrMask.CUR_STATE) != 0) {
            String why = QpTransitions.checkCurrentState(attr.curQpState, state());
            if (why != null) {
                throw new VerbsException(Errno.EINVAL, why); // as every provider; rxe would take it
            }
        }
        context.limits().checkModify(attr, mask); // the SPI's ranges, as on every provider
        int ret = modifyQp(attr, mask);
        if (ret != 0 && mask == QpAttrMask.STATE && attr.qpState == QpState.ERR
                && IbvQp.errnoOf(ret, ErrnoCapture.perThread().errno()) == Errno.EINVAL && state() == QpState.RESET) {
            ret = resetToErrThroughInit();
        }
        if (ret != 0) {
            throw Downcalls.failAs(ret, "ibv_modify_qp of " + describe()
                    + ((mask & QpAttrMask.STATE) != 0 ? " to " + attr.qpState : "") + " (attr_mask 0x"
                    + Integer.toHexString(mask) + ") failed");
        }
    }

    /** ibv_modify_qp: its return value; errno is left in {@link ErrnoCapture#perThread()}. */
    private int modifyQp(QpAttr attr, int mask) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = a.allocate(IBV_QP_ATTR);
            QpAttrCodec.encode(m, attr, mask);
            return Downcalls.status(e -> (int) IbvQp.MODIFY_QP.invokeExact(e, qp, m, mask));
        }
    }

    /**
     * RESET -> ERR, which every state may take by the contract (S-QP-4, S-QP-7) but the kernel's table
     * (ib_modify_qp_is_ok) lacks: through INIT with the attributes any port has (port 1, P_Key index 0,
     * no access, Q_Key 0), then to ERR. Returns the first failing ibv_modify_qp's value.
     */
    private int resetToErrThroughInit() {
        QpAttr init = new QpAttr().state(QpState.INIT).portNum(1).pkeyIndex(0).accessFlags(0).qkey(0);
        int ret = modifyQp(init, QpAttrMask.STATE | QpTransitions.required(type(), QpState.RESET, QpState.INIT));
        return ret != 0 ? ret : modifyQp(new QpAttr().state(QpState.ERR), QpAttrMask.STATE);
    }

    private void query(MemorySegment attr, int mask, MemorySegment init) {
        Downcalls.checkAs(() -> "ibv_query_qp of " + describe() + " failed",
                e -> (int) IbvQp.QUERY_QP.invokeExact(e, qp, attr, mask, init));
    }

    @Override
    public QpAttr query(QpAttr out, QpInitAttr initOut) {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment attr = a.allocate(IBV_QP_ATTR);
            MemorySegment init = a.allocate(IBV_QP_INIT_ATTR);
            query(attr, QUERY_ALL, init);
            QpAttrCodec.decode(attr, out);
            if (initOut != null) {
                reportInit(initOut, new QpCap(init.get(ValueLayout.JAVA_INT, CAP_MAX_SEND_WR),
                        init.get(ValueLayout.JAVA_INT, CAP_MAX_RECV_WR), init.get(ValueLayout.JAVA_INT, CAP_MAX_SEND_SGE),
                        init.get(ValueLayout.JAVA_INT, CAP_MAX_RECV_SGE), init.get(ValueLayout.JAVA_INT, CAP_MAX_INLINE)),
                        init.get(ValueLayout.JAVA_INT, INIT_SQ_SIG_ALL) != 0);
            }
            return out;
        }
    }

    @Override
    public void postSend(SendWorkRequest wr) {
        synchronized (sendWrs) {
            if (dead) {
                ensureOpen();
                throw new IllegalStateException(describe() + " is being destroyed");
            }
            ensureOpen();
            PostException refused = sendWrs.encode(wr);
            int ret = Downcalls.post(postSendFn, qpAddress, sendWrs.headAddress(), sendWrs.badWrAddress);
            if (ret != 0) {
                int i = sendWrs.badIndex();
                throw new PostException(Downcalls.providerErrno(ret), "post_send on " + describe() + " failed",
                        nth(wr, i), i);
            }
            if (sendWrs.binds > 0) {
                windowsBound(wr, refused == null ? Integer.MAX_VALUE : refused.badIndex());
            }
            if (refused != null) {
                throw refused; // the requests before it were posted
            }
        }
    }

    @Override
    public void postRecv(RecvWorkRequest wr) {
        if (recvWrs == null) {
            ensureOpen();
            // as the providers: a QP whose receives come from an SRQ has no receive queue of its own
            throw new PostException(Errno.EINVAL, describe() + " takes its receives from an SRQ: post them there", wr, 0);
        }
        synchronized (recvLock) {
            if (dead) {
                ensureOpen();
                throw new IllegalStateException(describe() + " is being destroyed");
            }
            ensureOpen();
            PostException refused = recvWrs.encode(wr);
            int ret = Downcalls.post(postRecvFn, qpAddress, recvWrs.headAddress(), recvWrs.badWrAddress);
            if (ret != 0) {
                int i = recvWrs.badIndex();
                throw new PostException(Downcalls.providerErrno(ret), "post_recv on " + describe() + " failed",
                        nth(wr, i), i);
            }
            if (refused != null) {
                throw refused; // the requests before it were posted
            }
        }
    }

    /** The type 2 windows of the BIND_MW requests among the first {@code posted} of the chain now carry their new rkeys. */
    private static void windowsBound(SendWorkRequest head, int posted) {
        int k = 0;
        for (SendWorkRequest w = head; w != null && k < posted; w = w.next(), k++) {
            if (w.opcode() == org.rdma4j.verbs.WrOpcode.BIND_MW && w.mw() instanceof NativeMemoryWindow mw
                    && mw.type() == org.rdma4j.verbs.MwType.TYPE_2) {
                mw.boundTo(w.bindRkey());
            }
        }
    }

    static SendWorkRequest nth(SendWorkRequest head, int i) {
        SendWorkRequest w = head;
        for (int k = 0; k < i && w.next() != null; k++) {
            w = w.next();
        }
        return w;
    }

    static RecvWorkRequest nth(RecvWorkRequest head, int i) {
        RecvWorkRequest w = head;
        for (int k = 0; k < i && w.next() != null; k++) {
            w = w.next();
        }
        return w;
    }

    private record McastAttachment(Gid gid, int lid) {
    }

    @Override
    public synchronized void attachMcast(Gid gid, int lid) {
        ensureOpen();
        mcastCall(IbvQp.ATTACH_MCAST, "ibv_attach_mcast", gid, lid);
        McastAttachment a = new McastAttachment(gid, lid & 0xFFFF);
        if (!mcast.contains(a)) {
            mcast.add(a);
        }
    }

    @Override
    public synchronized void detachMcast(Gid gid, int lid) {
        ensureOpen();
        mcastCall(IbvQp.DETACH_MCAST, "ibv_detach_mcast", gid, lid);
        mcast.remove(new McastAttachment(gid, lid & 0xFFFF));
    }

    private void mcastCall(java.lang.invoke.MethodHandle h, String verb, Gid gid, int lid) {
        if (gid == null) {
            throw new VerbsException(Errno.EINVAL, verb + ": no GID");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment g = a.allocate(Gid.LENGTH, 8);
            MemorySegment.copy(gid.bytes(), 0, g, ValueLayout.JAVA_BYTE, 0, Gid.LENGTH);
            Downcalls.checkAs(() -> verb + "(" + gid + ", LID " + lid + ") on " + describe() + " failed",
                    e -> (int) h.invokeExact(e, qp, g, (short) lid));
        }
    }
}
