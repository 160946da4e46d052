package org.rdma4j.soft.engine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.link.Packet;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * One queue pair's transport engine: its send queue, the QP attributes the data path reads, and one
 * run-to-completion {@link Task} that drives the {@link Requester}, {@link Responder} and
 * {@link Completer} (the three parts rxe runs as separate tasks; here one task runs them in turn, so
 * the transport state needs no locks). Posting is thread safe; everything else runs inside the task.
 */
public final class QpEngine {
    /** Settings a QP is created with. */
    public record Config(QpType type, Object pd, CqRing sendCq, CqRing recvCq, RecvQueue recvQueue,
                         boolean usesSrq, int maxSendWr, int maxSendSge, int maxInline, boolean sqSigAll,
                         AsyncEventSink events) {
    }

    static final int INBOUND_CAPACITY = 4096;
    /** The inbound ring starts this small and doubles up to {@link #INBOUND_CAPACITY} as bursts need it. */
    static final int INBOUND_INITIAL = 8;
    /** Tasks one thread may run nested inside each other before deferring to the progress thread. */
    static final int MAX_INLINE_DEPTH = 3;
    private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);

    final Hca hca;
    public final int qpn;
    final QpType type;
    final int transport;
    final Object pd;
    final CqRing scq;
    final CqRing rcq;
    final RecvQueue rq;
    final boolean usesSrq;
    final int maxSendWr;
    final int maxSendSge;
    final int maxInline;
    final boolean sqSigAll;
    final AsyncEventSink events;

    // Attributes, written by the control path inside runExclusive, read by the task.
    volatile QpState state = QpState.RESET;
    int mtu = 1024;
    int destQpn;
    Gid dgid;
    Gid sgid;
    /** The AV's hop limit, traffic class and flow label: every packet of a connected QP carries them (as rxe). */
    int avHopLimit;
    int avTrafficClass;
    int avFlowLabel;
    int qkey;
    int accessFlags;
    int timeout;
    int retryCnt;
    int rnrRetry;
    int minRnrTimer;
    int maxRdAtomic;
    int maxDestRdAtomic;
    boolean sqdNotify;
    volatile boolean sqDraining;
    int pkey = 0xFFFF;

    // Send queue: slots [sqTail, sqHead) are posted; [sqTail, sqCursor) have been started.
    final SendWqe[] sq;
    private final Object postLock = new Object();
    volatile long sqHead;
    volatile long sqTail;
    long sqCursor;

    // Inbound packets, filled by delivering threads, drained by the task (guarded by inboundLock). An idle
    // QP holds no ring at all: most of a large table never receives a burst.
    private final Object inboundLock = new Object();
    private Packet[] inbound;
    private long inHead;
    private long inTail;

    // The device's timer heap (see TimerHeap): slot guarded by it, the queued deadline read without lock.
    int timerSlot = -1;
    volatile long timerQueuedNs = Long.MAX_VALUE;

    private volatile boolean cqErrorPending;
    static final boolean DEBUG = Boolean.getBoolean("rdma4j.debug");
    private final String[] trace = DEBUG ? new String[64] : null;
    private int traceNext;

    /** Records an event for {@link #dumpTrace()} (only with -Drdma4j.debug=true). */
    void trace(String event) {
        if (trace != null) {
            trace[traceNext++ % trace.length] = System.nanoTime() / 1000 % 1_000_000 + "us " + event;
        }
    }

    static final java.util.List<QpEngine> ALL = DEBUG ? new java.util.concurrent.CopyOnWriteArrayList<>() : null;

    /** Traces of this QP and of the QPs connected to it (debug). */
    String dumpTraces() {
        StringBuilder sb = new StringBuilder(dumpTrace());
        for (QpEngine q : ALL) {
            sb.append("  QP ").append(q.hca.name).append(" 0x").append(Integer.toHexString(q.qpn)).append(" -> 0x")
                    .append(Integer.toHexString(q.destQpn)).append(" ").append(q.dgid).append(" task ")
                    .append(q.task.debugState()).append(" state ").append(q.state).append(" sq ").append(q.sqTail)
                    .append("..").append(q.sqHead).append(" inbound ").append(q.inTail).append("..").append(q.inHead)
                    .append('\n');
        }
        for (QpEngine q : ALL) {
            if (q.destQpn == qpn && q != this && q.hca != hca) {
                sb.append("  peer qp 0x").append(Integer.toHexString(q.qpn)).append(" state ").append(q.state)
                        .append(" ").append(q.responder.debugState()).append('\n').append(q.dumpTrace());
            }
        }
        return sb.toString();
    }

    String dumpTrace() {
        StringBuilder sb = new StringBuilder();
        if (trace != null) {
            for (int i = 0; i < trace.length; i++) {
                String e = trace[(traceNext + i) % trace.length];
                if (e != null) {
                    sb.append("    ").append(e).append('\n');
                }
            }
        }
        return sb.toString();
    }
    final Requester requester;
    final Responder responder;
    final Completer completer;
    private final Task task;

    public QpEngine(Hca hca, Config c) {
        this.hca = hca;
        this.type = c.type();
        this.transport = switch (c.type()) {
            case RC -> Opcode.TRANSPORT_RC;
            case UC -> Opcode.TRANSPORT_UC;
            case UD -> Opcode.TRANSPORT_UD;
        };
        this.pd = c.pd();
        this.scq = c.sendCq();
        this.rcq = c.recvCq();
        this.rq = c.recvQueue();
        this.usesSrq = c.usesSrq();
        this.maxSendWr = Math.max(1, c.maxSendWr());
        this.maxSendSge = Math.max(1, c.maxSendSge());
        this.maxInline = c.maxInline();
        this.sqSigAll = c.sqSigAll();
        this.events = c.events();
        MemorySegment inlineSlab = maxInline > 0 ? Arena.ofAuto().allocate((long) maxInline * maxSendWr, 8) : null;
        sq = new SendWqe[maxSendWr];
        for (int i = 0; i < maxSendWr; i++) {
            sq[i] = new SendWqe(maxSendSge,
                    inlineSlab == null ? null : inlineSlab.asSlice((long) i * maxInline, maxInline));
        }
        if (type == QpType.UD) {
            mtu = 4096; // UD has no path MTU attribute: the port's active MTU applies
        }
        requester = new Requester(this);
        responder = new Responder(this);
        completer = new Completer(this);
        task = new Task(this::doWork);
        if (DEBUG) {
            ALL.add(this);
        }
        int n = hca.addQp(this);
        if (n < 0) {
            throw new org.rdma4j.verbs.VerbsException(Errno.ENOMEM, "no free QP number");
        }
        qpn = n;
    }

    public QpState state() {
        return state;
    }

    public boolean sqDraining() {
        return sqDraining;
    }

    /**
     * The live PSNs for query_qp, read between two runs of the task: the responder's expected PSN in
     * the high 32 bits, the PSN of the requester's next packet in the low 32 bits.
     */
    public long livePsns() {
        long[] out = new long[1];
        task.runExclusive(() -> out[0] = (long) responder.expectedPsn() << 32 | requester.psn & 0xFFFFFFFFL);
        return out[0];
    }

    SendWqe wqe(long index) {
        return sq[(int) (index % sq.length)];
    }

    // ------------------------------------------------------------------ control path

    /** Settings applied by {@link #modify}; only fields named in the mask are used. */
    public record Change(QpState next, int mask, int mtuBytes, int destQpn, Gid dgid, Gid sgid, GlobalRoute grh, int qkey,
                         int accessFlags, int rqPsn, int sqPsn, int timeout, int retryCnt, int rnrRetry,
                         int minRnrTimer, int maxRdAtomic, int maxDestRdAtomic, boolean sqdNotify) {
    }

    /** Applies a validated modify: attributes first, then the state, exclusively of the task. */
    public void modify(Change c) {
        task.runExclusive(() -> apply(c));
    }

    private void apply(Change c) {
        int m = c.mask();
        if ((m & org.rdma4j.verbs.QpAttrMask.PATH_MTU) != 0) {
            mtu = c.mtuBytes();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.DEST_QPN) != 0) {
            destQpn = c.destQpn();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.AV) != 0) {
            dgid = c.dgid();
            sgid = c.sgid();
            avHopLimit = hopLimitOrDefault(c.grh().hopLimit());
            avTrafficClass = c.grh().trafficClass();
            avFlowLabel = c.grh().flowLabel();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.QKEY) != 0) {
            qkey = c.qkey();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.ACCESS_FLAGS) != 0) {
            accessFlags = c.accessFlags();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.TIMEOUT) != 0) {
            timeout = c.timeout();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.RETRY_CNT) != 0) {
            retryCnt = c.retryCnt();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.RNR_RETRY) != 0) {
            rnrRetry = c.rnrRetry();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.MIN_RNR_TIMER) != 0) {
            minRnrTimer = c.minRnrTimer();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.MAX_QP_RD_ATOMIC) != 0) {
            maxRdAtomic = c.maxRdAtomic();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.MAX_DEST_RD_ATOMIC) != 0) {
            maxDestRdAtomic = c.maxDestRdAtomic();
            responder.resizeResources(maxDestRdAtomic);
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.EN_SQD_ASYNC_NOTIFY) != 0) {
            sqdNotify = c.sqdNotify();
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.RQ_PSN) != 0) {
            responder.setExpectedPsn(c.rqPsn());
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.SQ_PSN) != 0) {
            requester.setPsn(c.sqPsn());
        }
        if ((m & org.rdma4j.verbs.QpAttrMask.RETRY_CNT) != 0 || (m & org.rdma4j.verbs.QpAttrMask.RNR_RETRY) != 0) {
            completer.resetRetries();
        }
        QpState from = state;
        QpState to = c.next();
        switch (to) {
            case RESET -> reset();
            case ERR -> enterError();
            case SQD -> {
                if (from == QpState.RTS) {
                    sqDraining = true;
                }
                state = QpState.SQD;
            }
            default -> {
                if (from == QpState.SQD) {
                    sqDraining = false;
                }
                state = to;
            }
        }
    }

    private void reset() {
        state = QpState.RESET;
        sqDraining = false;
        drainInbound();
        sqTail = sqHead;
        sqCursor = sqHead;
        if (!usesSrq) {
            rq.drain(r -> { });
        }
        requester.reset();
        responder.reset();
        completer.reset();
    }

    /** Moves the QP to ERR and flushes (inside the task). */
    void enterError() {
        if (state != QpState.ERR && QpEngine.DEBUG) {
            new Throwable("qp 0x" + Integer.toHexString(qpn) + " enters ERR from " + state).printStackTrace();
        }
        if (state != QpState.ERR) {
            state = QpState.ERR;
            sqDraining = false;
            completer.disarmTimers();
            drainInbound();
            responder.flushInFlight();
            if (usesSrq) {
                events.qpEvent(AsyncEventType.QP_LAST_WQE_REACHED);
            }
        }
        completer.flushSendQueue();
        if (!usesSrq) {
            rq.drain(r -> pushRecvCompletion(r.wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, 0, 0, 0, 0, false));
        }
    }

    /** Destroys: removes the QP from the device. */
    public void destroy() {
        task.runExclusive(() -> {
            state = QpState.RESET;
            drainInbound();
            completer.disarmTimers();
        });
        hca.removeQp(qpn);
    }

    /** True if an outstanding send or posted receive uses {@code lkey} (deregistration check). */
    public boolean uses(int lkey) {
        for (long i = sqTail; i < sqHead; i++) {
            SendWqe w = wqe(i);
            for (int s = 0; s < w.numSge; s++) {
                if (w.lkey[s] == lkey) {
                    return true;
                }
            }
        }
        return !usesSrq && rq.uses(lkey);
    }

    // ------------------------------------------------------------------ posting

    /** {@code ibv_post_send}. */
    public void postSend(SendWorkRequest first) {
        int index = 0;
        try {
            synchronized (postLock) {
                for (SendWorkRequest w = first; w != null; w = w.next(), index++) {
                    QpState s = state;
                    if (s == QpState.RESET || s == QpState.INIT || s == QpState.RTR) {
                        throw new PostException(Errno.EINVAL, "post_send on a QP in state " + s
                                + " (needs RTS)", w, index);
                    }
                    String bad = validate(w);
                    if (bad != null) {
                        throw new PostException(Errno.EINVAL, bad, w, index);
                    }
                    if (sqHead - sqTail >= maxSendWr) {
                        throw new PostException(Errno.ENOMEM, "send queue full (" + maxSendWr + " WRs)", w, index);
                    }
                    String err = fill(wqe(sqHead), w);
                    if (err != null) {
                        throw new PostException(Errno.EINVAL, err, w, index);
                    }
                    sqHead = sqHead + 1;
                }
            }
        } finally {
            if (index > 0) {
                task.run();
            }
        }
    }

    private String validate(SendWorkRequest w) {
        WrOpcode op = w.opcode();
        if (op == null) {
            return "no opcode";
        }
        switch (type) {
            case UD -> {
                if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
                    return op + " is not supported on a UD QP";
                }
                if (w.ah() == null) {
                    return "UD send without an address handle";
                }
                if (w.ah().isClosed()) {
                    throw new IllegalStateException("the address handle of UD work request " + w.wrId() + " is closed");
                }
            }
            case UC -> {
                if (op == WrOpcode.RDMA_READ || op.isAtomic() || op == WrOpcode.SEND_WITH_INV) {
                    return op + " is not supported on a UC QP";
                }
            }
            default -> { }
        }
        if (w.numSge() > maxSendSge) {
            return "work request has " + w.numSge() + " SGEs, max_send_sge is " + maxSendSge;
        }
        long total = w.payloadLength();
        if ((w.inlineData() != null || (w.sendFlags() & SendFlag.INLINE) != 0) && !(op.isSend() || op.isWrite())) {
            // as rxe's validate_send_wr ("opcode doesn't support inline data"): READ, atomics and the
            // local operations carry no payload to copy
            return "inline data needs a SEND or RDMA WRITE, not " + op;
        }
        if (total > Integer.toUnsignedLong(Integer.MAX_VALUE)) {
            return "message of " + total + " bytes exceeds max_msg_sz";
        }
        if (((w.sendFlags() & SendFlag.INLINE) != 0 || w.inlineData() != null) && (op.isSend() || op.isWrite())) {
            if (total > maxInline) {
                return "inline data of " + total + " bytes exceeds max_inline_data " + maxInline;
            }
        }
        if (op.isAtomic()) {
            if ((w.remoteAddr() & 7) != 0) {
                return "atomic remote address 0x" + Long.toHexString(w.remoteAddr()) + " is not 8-byte aligned";
            }
            if (total != 8) {
                return "atomic needs one 8-byte local buffer, got " + total + " bytes";
            }
        }
        if (op == WrOpcode.BIND_MW && (w.mw() == null || w.bindMr() == null && w.bindLength() != 0)) {
            return "BIND_MW without a window or a region";
        }
        return null;
    }

    private String fill(SendWqe q, SendWorkRequest w) {
        q.resetProgress();
        q.wrId = w.wrId();
        q.opcode = w.opcode();
        q.flags = w.sendFlags();
        q.signaled = sqSigAll || (w.sendFlags() & SendFlag.SIGNALED) != 0;
        q.numSge = w.numSge();
        for (int i = 0; i < q.numSge; i++) {
            q.addr[i] = w.sgeAddr(i);
            q.length[i] = w.sgeLength(i);
            q.lkey[i] = w.sgeLkey(i);
        }
        q.totalLength = w.payloadLength();
        q.isInline = (w.inlineData() != null || (w.sendFlags() & SendFlag.INLINE) != 0)
                && (q.opcode.isSend() || q.opcode.isWrite());
        if (w.inlineData() != null) {
            MemorySegment.copy(w.inlineData(), 0, q.inlineData, 0, q.totalLength);
            q.numSge = 0;
        } else if (q.isInline && q.totalLength > 0) {
            long at = 0;
            for (int i = 0; i < q.numSge; i++) {
                if (q.length[i] == 0) {
                    continue;
                }
                MemKey k = hca.keys.lookup(q.lkey[i]);
                if (k == null || !k.valid || k.isWindow() || !k.covers(q.addr[i], q.length[i]) || !k.alive()) {
                    k = hca.keys.findRegionCovering(q.addr[i], q.length[i]);
                }
                if (k == null) {
                    // A raw address cannot be dereferenced safely from Java: ask for the segment instead.
                    return "inline data at 0x" + Long.toHexString(q.addr[i]) + " is not in memory registered on "
                            + hca.name + "; pass unregistered data with SendWorkRequest.inlineData(MemorySegment)";
                }
                MemorySegment.copy(k.segment, k.offsetOf(q.addr[i]), q.inlineData, at, q.length[i]);
                at += q.length[i];
            }
            q.numSge = 0;
        }
        q.imm = w.immData();
        q.invRkey = w.invalidateRkey();
        q.remoteAddr = w.remoteAddr();
        q.rkey = w.rkey();
        q.compareAdd = w.compareAdd();
        q.swap = w.swap();
        if (type == QpType.UD) {
            org.rdma4j.verbs.AhAttr ah = w.ah().attr();
            q.dgid = ah.grh().dgid();
            q.sgid = hca.gid(ah.grh().sgidIndex());
            q.remoteQpn = w.remoteQpn() & 0xFFFFFF;
            q.remoteQkey = w.remoteQkey();
            q.hopLimit = hopLimitOrDefault(ah.grh().hopLimit());
            q.trafficClass = ah.grh().trafficClass();
            q.flowLabel = ah.grh().flowLabel();
            q.ahInQpPd = w.ah().pd() == pd;
        }
        if (q.opcode == WrOpcode.BIND_MW) {
            q.mw = ((KeyHolder) w.mw()).memKey();
            q.bindRkey = w.bindRkey();
            q.bindMr = w.bindMr() == null ? null : ((KeyHolder) w.bindMr()).memKey();
            q.bindAddr = w.bindAddr();
            q.bindLength = w.bindLength();
            q.bindAccess = w.bindAccess();
        }
        return null;
    }

    /** {@code ibv_post_recv} on the QP's own receive queue. */
    public void postRecv(RecvWorkRequest wr) {
        if (usesSrq) {
            throw new PostException(Errno.EINVAL, "QP 0x" + Integer.toHexString(qpn)
                    + " receives from a shared receive queue", wr, 0);
        }
        if (state == QpState.RESET) {
            throw new PostException(Errno.EINVAL, "post_recv on a QP in state RESET", wr, 0);
        }
        rq.post(wr);
        if (state == QpState.ERR) {
            task.run();
        }
    }

    // ------------------------------------------------------------------ delivery and the task

    /** A packet for this QP arrived (any thread). */
    void inbound(Packet p) {
        if (enqueueInbound(p)) {
            schedule();
        }
    }

    /** Hop limit 0 in an address vector means the default (64), on every link alike. */
    private static int hopLimitOrDefault(int hopLimit) {
        return hopLimit == 0 ? Packet.DEFAULT_HOP_LIMIT : hopLimit;
    }

    /**
     * Whether a packet for this QP may speak for the connection (rxe's check_addr): for RC and UC
     * from RTR on, its source must be the destination GID of the QP's address vector and its
     * destination the QP's source GID. UD takes datagrams from anyone; in RESET, INIT and ERR the
     * transport drops the packet by state, as before. Allocation-free (any thread).
     */
    boolean fromConnectedPeer(Packet p) {
        if (type == QpType.UD) {
            return true;
        }
        QpState s = state; // volatile: read before the AV, which is written before the state
        if (s == QpState.RESET || s == QpState.INIT || s == QpState.ERR) {
            return true;
        }
        Gid d = dgid;
        Gid own = sgid;
        return d != null && own != null && d.equals(p.srcGid) && own.equals(p.dstGid);
    }

    /** Set while this QP waits in the device's receive batch (receive thread only). */
    boolean inBatch;

    /** Queues an arrived packet; false when the queue was full and the packet was dropped. */
    boolean enqueueInbound(Packet p) {
        synchronized (inboundLock) {
            Packet[] ring = inbound;
            int queued = (int) (inHead - inTail);
            if (ring == null || queued == ring.length) {
                if (queued == INBOUND_CAPACITY) {
                    hca.counters.inc(Counter.INBOUND_OVERFLOW);
                    p.release();
                    return false;
                }
                ring = growInbound(ring, queued);
            }
            ring[(int) (inHead++ & (ring.length - 1))] = p;
        }
        return true;
    }

    /** A ring twice as large (the first one {@link #INBOUND_INITIAL}) with the queued packets in order. */
    private Packet[] growInbound(Packet[] old, int queued) {
        Packet[] ring = new Packet[old == null ? INBOUND_INITIAL : old.length * 2];
        for (int i = 0; i < queued; i++) {
            ring[i] = old[(int) ((inTail + i) & (old.length - 1))];
        }
        inTail = 0;
        inHead = queued;
        inbound = ring;
        return ring;
    }

    /**
     * Runs the task on this thread unless this thread is already inside {@value #MAX_INLINE_DEPTH}
     * tasks (delivery between devices nests: a requester's send runs the peer's responder, whose ACK
     * runs ...); then the device's progress thread runs it, so stacks stay shallow.
     */
    void schedule() {
        int[] depth = DEPTH.get();
        if (depth[0] >= MAX_INLINE_DEPTH) {
            hca.defer(this);
            return;
        }
        depth[0]++;
        try {
            task.run();
        } finally {
            depth[0]--;
        }
    }

    private Packet nextInbound() {
        synchronized (inboundLock) {
            if (inTail == inHead) {
                return null;
            }
            Packet[] ring = inbound;
            int i = (int) (inTail++ & (ring.length - 1));
            Packet p = ring[i];
            ring[i] = null;
            return p;
        }
    }

    private void drainInbound() {
        Packet p;
        while ((p = nextInbound()) != null) {
            p.release();
        }
    }

    /** Runs the QP task (progress thread). */
    void runTask() {
        schedule();
    }

    /** The earliest timer deadline (ACK timeout or RNR wait), or Long.MAX_VALUE. */
    long nextDeadlineNs() {
        return completer.nextDeadlineNs();
    }

    private boolean doWork() {
        boolean progress = false;
        if (cqErrorPending) {
            cqErrorPending = false;
            if (state != QpState.ERR && state != QpState.RESET) {
                enterError();
            }
        }
        Packet p;
        while ((p = nextInbound()) != null) {
            progress = true;
            try {
                int op = p.buffer.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0) & 0xFF;
                if (!Opcode.isValid(op) || p.headerLength < Opcode.headerLength(op)) {
                    hca.counters.inc(Counter.MALFORMED);
                } else if (Opcode.isResponse(op)) {
                    if (DEBUG) {
                        trace(Opcode.name(op) + " in psn " + Integer.toHexString(Wire.psn(p.buffer)));
                    }
                    completer.receive(p, op);
                } else {
                    if (DEBUG) {
                        trace("req " + Opcode.name(op) + " in psn " + Integer.toHexString(Wire.psn(p.buffer)));
                    }
                    responder.receive(p, op);
                }
            } catch (IllegalStateException | IndexOutOfBoundsException e) {
                // registered memory went away under us (a closed arena) or a hostile length: drop
                hca.counters.inc(Counter.MALFORMED);
            } finally {
                p.release();
            }
        }
        if (progress) {
            responder.flushAck(); // one acknowledgement for everything this pass took in
        }
        QpState s = state;
        if (s == QpState.ERR) {
            if (sqTail != sqHead) {
                completer.flushSendQueue();
            }
            if (!usesSrq && rq.count() > 0) {
                rq.drain(r -> pushRecvCompletion(r.wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, 0, 0, 0, 0,
                        false));
            }
            return progress;
        }
        if (s == QpState.RESET || s == QpState.INIT) {
            return progress;
        }
        progress |= completer.checkTimers();
        progress |= requester.step();
        progress |= completer.retire();
        return progress;
    }

    // ------------------------------------------------------------------ completions

    /**
     * Retires the oldest send WQE: frees its slot first (a completion the application can see means
     * the slot is free to post again), then writes the completion if it is signaled or failed.
     */
    void retireOldest(WcStatus status, boolean completion) {
        SendWqe w = wqe(sqTail);
        long wrId = w.wrId;
        WcOpcode op = w.opcode.completionOpcode();
        int byteLen = w.opcode.isAtomic() ? 8 : (int) w.totalLength;
        sqTail = sqTail + 1;
        if (completion && !scq.push(wrId, status, op, byteLen, qpn, 0, 0, 0, 0, false)) {
            cqOverflowed();
        }
    }

    void pushRecvCompletion(long wrId, WcStatus status, WcOpcode op, int byteLen, int flags, int imm, int inv,
                            int srcQp, boolean solicited) {
        if (!rcq.push(wrId, status, op, byteLen, qpn, flags, imm, inv, srcQp, solicited)) {
            cqOverflowed();
        }
    }

    /** A UD receive completion, which also says which network header its GRH area holds. */
    void pushUdRecvCompletion(long wrId, int byteLen, int flags, int imm, int srcQp, boolean solicited,
                              org.rdma4j.verbs.NetworkHeaderType headerType) {
        if (!rcq.push(wrId, WcStatus.SUCCESS, WcOpcode.RECV, byteLen, qpn, flags, imm, 0, srcQp, solicited,
                headerType)) {
            cqOverflowed();
        }
    }

    private void cqOverflowed() {
        // The CQ raised IBV_EVENT_CQ_ERR; the QPs using it go to the error state.
        if (state != QpState.ERR) {
            enterError();
            events.qpEvent(AsyncEventType.QP_FATAL);
        }
    }

    /** Called by the CQ's owner when a CQ this QP uses overflowed (any thread). */
    public void cqError() {
        cqErrorPending = true;
        task.run();
    }

    public CqRing sendCq() {
        return scq;
    }

    public CqRing recvCq() {
        return rcq;
    }
}
