// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.link.DirectLink;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.link.Route;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.NetworkHeaderType;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * One queue pair (rxe_qp.c): the QP attributes the data path reads, the state transitions, posting,
 * the connected peer on an in-process fabric, and the completion queues. Its {@link QpTask} runs the
 * {@link Requester}, {@link Responder} and {@link Completer} in one run-to-completion pass (the three
 * state machines rxe runs as separate tasks; here one task runs them in turn, so the transport state
 * needs no locks). The send queue is the {@link SendQueue}'s; the receive queue the
 * {@link RecvQueue}'s. Posting is thread safe; everything else runs inside the task.
 */
public final class QpEngine {
    /** Settings a QP is created with. */
    public record Config(QpType type, Pd pd, CqRing sendCq, CqRing recvCq, RecvQueue recvQueue,
                         boolean usesSrq, int maxSendWr, int maxSendSge, int maxInline, boolean sqSigAll,
                         AsyncEventSink events) {
    }

    final Hca hca;
    public final int qpn;
    final QpType type;
    final int transport;
    final Pd pd;
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
    /** The path MTU in bytes (UD: the port's). */
    int mtuBytes = 1024;
    int destQpn;
    Gid dgid;
    Gid sgid;
    /** The AV's hop limit, traffic class and flow label: every packet of a connected QP carries them (as rxe). */
    int avHopLimit;
    int avTrafficClass;
    int avFlowLabel;
    int qkey;
    int accessFlags;
    /** The local ACK timeout as IBTA codes it: 4.096 us * 2^code, 0 = none (see RnrTimer). */
    int timeoutCode;
    int retryCnt;
    int rnrRetry;
    /** The RNR NAK timer code this QP sends (IBTA table 45). */
    int minRnrTimerCode;
    int maxRdAtomic;
    int maxDestRdAtomic;
    boolean sqdNotify;
    volatile boolean sqDraining;
    /**
     * In SQD: the send queue index below which work requests were posted before the transition from
     * RTS; the requester starts those, and the queue is drained when they are retired. Written before
     * {@link #sqDraining}, read after it.
     */
    long sqdLimit = Long.MIN_VALUE;
    int pkey = 0xFFFF;

    final SendQueue sq;
    /** How this QP's packets reach its peer ({@link #path()}); null until resolved (task only). */
    private Path path;
    /** This QP's path through the link, made once. */
    private final Path.OverLink overLink = new Path.OverLink(this);

    // The device's timer heap (see TimerHeap): slot guarded by it, the queued deadline read without lock.
    int timerSlot = -1;
    volatile long timerQueuedNs = Long.MAX_VALUE;

    /**
     * Set by {@link #destroy} before the QP leaves the device's table, never cleared: a peer holding
     * this QP in its {@link #directPeer} cache looks it up again once this is set.
     */
    private volatile boolean destroyed;
    /** SENT_PKTS and RCVD_PKTS of the packet-less in-process WRITEs and ACKs (task only; see {@link Counters.Cell}). */
    final Counters.Cell packetCounts;
    final Requester requester;
    final Responder responder;
    final Completer completer;
    /** The QP's task, its inbound queue and the in-process hand-overs. */
    final QpTask task;

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
        sq = new SendQueue(this);
        if (type == QpType.UD) {
            mtuBytes = 4096; // UD has no path MTU attribute: the port's active MTU applies
        }
        requester = new Requester(this, sq);
        responder = new Responder(this);
        completer = new Completer(this, sq);
        task = new QpTask(this);
        packetCounts = hca.counters.newCell(); // before the QP is in the table, where peers find it
        int n = hca.addQp(this);
        if (n < 0) {
            hca.counters.retire(packetCounts);
            throw new VerbsException(Errno.ENOMEM, "no free QP number");
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
        task.runExclusive(() -> out[0] = (long) responder.expectedPsn() << 32 | requester.nextPsn() & 0xFFFFFFFFL);
        return out[0];
    }

    // ------------------------------------------------------------------ control path

    /** Settings applied by {@link #modify}; only fields named in the mask are used. */
    public record Change(QpState next, int mask, int mtuBytes, int destQpn, Gid dgid, Gid sgid, GlobalRoute grh, int qkey,
                         int accessFlags, int rqPsn, int sqPsn, int timeout, int retryCnt, int rnrRetry,
                         int minRnrTimer, int maxRdAtomic, int maxDestRdAtomic, boolean sqdNotify) {
    }

    /**
     * Applies a validated modify: attributes first, then the state, exclusively of the task. Before a
     * move to ERR the packets already queued for the QP are taken in, in the state they arrived in (a
     * NIC processes what it received before the transition): an ACK waiting behind the task when the
     * program, or the CM on a peer's DREQ, moves the QP to ERR completes its SEND instead of being
     * dropped with the queue and leaving the SEND to be flushed.
     */
    public void modify(Change c) {
        task.runExclusive(() -> {
            if (c.next() == QpState.ERR && state != QpState.ERR && state != QpState.RESET) {
                task.takeInQueued();
            }
            apply(c);
        });
    }

    private void apply(Change c) {
        int m = c.mask();
        if ((m & QpAttrMask.PATH_MTU) != 0) {
            mtuBytes = c.mtuBytes();
        }
        if ((m & QpAttrMask.DEST_QPN) != 0) {
            destQpn = c.destQpn();
        }
        if ((m & QpAttrMask.AV) != 0) {
            path = null;
            dgid = c.dgid();
            sgid = c.sgid();
            avHopLimit = hopLimitOrDefault(c.grh().hopLimit());
            avTrafficClass = c.grh().trafficClass();
            avFlowLabel = c.grh().flowLabel();
        }
        if ((m & QpAttrMask.QKEY) != 0) {
            qkey = c.qkey();
        }
        if ((m & QpAttrMask.ACCESS_FLAGS) != 0) {
            accessFlags = c.accessFlags();
        }
        if ((m & QpAttrMask.TIMEOUT) != 0) {
            timeoutCode = c.timeout();
        }
        if ((m & QpAttrMask.RETRY_CNT) != 0) {
            retryCnt = c.retryCnt();
        }
        if ((m & QpAttrMask.RNR_RETRY) != 0) {
            rnrRetry = c.rnrRetry();
        }
        if ((m & QpAttrMask.MIN_RNR_TIMER) != 0) {
            minRnrTimerCode = c.minRnrTimer();
        }
        if ((m & QpAttrMask.MAX_QP_RD_ATOMIC) != 0) {
            maxRdAtomic = c.maxRdAtomic();
        }
        if ((m & QpAttrMask.MAX_DEST_RD_ATOMIC) != 0) {
            maxDestRdAtomic = c.maxDestRdAtomic();
            responder.resizeResources(maxDestRdAtomic);
        }
        if ((m & QpAttrMask.EN_SQD_ASYNC_NOTIFY) != 0) {
            sqdNotify = c.sqdNotify();
        }
        if ((m & QpAttrMask.RQ_PSN) != 0) {
            responder.setExpectedPsn(c.rqPsn());
        }
        if ((m & QpAttrMask.SQ_PSN) != 0) {
            requester.setPsn(c.sqPsn());
            completer.startAt(c.sqPsn() & Psn.MASK);
        }
        if ((m & QpAttrMask.RETRY_CNT) != 0 || (m & QpAttrMask.RNR_RETRY) != 0) {
            completer.resetRetries();
        }
        QpState from = state;
        QpState to = c.next();
        switch (to) {
            case RESET -> reset();
            case ERR -> enterError();
            case SQD -> {
                if (from == QpState.RTS) {
                    // the requester still starts what was posted before this transition (a post may have
                    // left its work to the task on another thread, which has not started it yet)
                    sqdLimit = sq.head();
                    sqDraining = true;
                } else {
                    sqdLimit = Long.MIN_VALUE;
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
        peerCache = null; // holds no destroyed peer longer than needed
        sqDraining = false;
        task.drainInbound();
        sq.reset();
        if (!usesSrq) {
            rq.drain(r -> { });
        }
        requester.reset();
        responder.reset();
        completer.reset();
    }

    /** Moves the QP to ERR and flushes (inside the task). */
    void enterError() {
        if (state != QpState.ERR) {
            EngineEvents.qpError(this, state);
            state = QpState.ERR;
            sqDraining = false;
            completer.disarmTimers();
            task.drainInbound();
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
        destroyed = true;
        task.runExclusive(() -> {
            state = QpState.RESET;
            peerCache = null;
            task.drainInbound();
            completer.disarmTimers();
            sq.reset();
            if (!usesSrq) {
                rq.drain(r -> { });
            }
        });
        hca.removeQp(qpn);
        hca.counters.retire(packetCounts);
    }


    // ------------------------------------------------------------------ posting

    /** {@code ibv_post_send}: into the send queue, then the task runs what was posted. */
    public void postSend(SendWorkRequest first) {
        long before = sq.head();
        try {
            sq.post(first);
        } finally {
            if (sq.head() != before) {
                task.run();
            }
        }
    }

    /** Sends one of this QP's packets (task only), on its {@link #path()}. */
    void send(Packet p) {
        path().send(p);
    }

    /** Sends {@code count} of this QP's packets at once, in order, on its {@link #path()} (task only). */
    void send(Packet[] packets, int count) {
        path().send(packets, count);
    }

    /** How this QP's packets reach its peer now, resolved again when it stopped being valid. Task only. */
    Path path() {
        Path p = path;
        if (p != null && p.valid()) {
            return p;
        }
        p = Path.resolve(this, overLink);
        path = p;
        return p;
    }

    /**
     * The route to the connected peer on an in-process fabric ({@link DirectLink}), or null (UD,
     * another link, no such device). Task only.
     */
    Route directRoute() {
        return path().route();
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

    /**
     * The connected QP on an in-process fabric's other device, when both ports are up and it takes this
     * QP's packets ({@link #fromConnectedPeer}); else null (then the packet goes). Task only.
     *
     * <p>The QP found in the peer device's table is kept with the route and destination QPN it was
     * found for, and used again while all three hold and it is not {@link #destroyed}: a QP leaves the
     * table only when destroyed, so a live one is still the table's entry for its number, and its
     * number cannot have been given to another QP. Everything else is checked on every call as before
     * (ports, the peer's address vector here, its state and PSNs in {@link Responder#receive(PacketInfo)}).
     */
    QpEngine directPeer() {
        return directPeer(directRoute());
    }

    /** {@link #directPeer()} through {@code r}, a route its caller has just found valid (a {@link Path.InProcess}'s). */
    QpEngine directPeer(Route r) {
        if (r == null || !(r.sink instanceof Hca peerHca) || !hca.portUp() || !peerHca.portUp()) {
            return null;
        }
        int d = destQpn & 0xFFFFFF;
        QpEngine peer = peerCache;
        if (peer == null || peer.destroyed || r != peerCacheRoute || d != peerCacheQpn) {
            peer = d < Hca.FIRST_QPN || d == Hca.MULTICAST_QPN ? null : peerHca.qp(d);
            peerCache = peer;
            peerCacheRoute = r;
            peerCacheQpn = d;
            if (peer == null) {
                return null;
            }
        }
        // the GIDs are immutable and replaced, never changed, by modify: the same four objects that
        // matched last time match again, without comparing their bytes (4 % of an 8-byte WRITE stream)
        Gid peerDgid = peer.dgid;
        Gid peerSgid = peer.sgid;
        Gid own = sgid;
        Gid dst = dgid;
        if (peer == matchedPeer && peerDgid == matchedPeerDgid && peerSgid == matchedPeerSgid && own == matchedSgid
                && dst == matchedDgid) {
            return peer;
        }
        if (peer.type == QpType.UD) {
            return peer;
        }
        // the peer's fromConnectedPeer(own, dst), on the GIDs read above, so that what is kept is what matched
        if (!addressVectorMatches(peerDgid, peerSgid, own, dst)) {
            return null;
        }
        matchedPeer = peer;
        matchedPeerDgid = peerDgid;
        matchedPeerSgid = peerSgid;
        matchedSgid = own;
        matchedDgid = dst;
        return peer;
    }

    /** What {@link #directPeer} found last, and for which route and destination QPN (task only). */
    private QpEngine peerCache;
    private Route peerCacheRoute;
    private int peerCacheQpn;
    /** The peer and the four GIDs {@link #fromConnectedPeer(Gid, Gid)} last accepted (task only). */
    private QpEngine matchedPeer;
    private Gid matchedPeerDgid;
    private Gid matchedPeerSgid;
    private Gid matchedSgid;
    private Gid matchedDgid;

    /**
     * The connected peer {@link #directPeer} gives now, found inside this QP's task (for tests of the
     * soft device: that a destroyed peer or a reused QP number is never served from the cache).
     */
    public QpEngine directPeerNow() {
        QpEngine[] out = new QpEngine[1];
        task.runExclusive(() -> out[0] = directPeer());
        return out[0];
    }

    /** Hop limit 0 in an address vector means the default (64), on every link alike. */
    static int hopLimitOrDefault(int hopLimit) {
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
        return fromConnectedPeer(p.srcGid, p.dstGid);
    }

    /** {@link #fromConnectedPeer(Packet)} for a packet from {@code src} to {@code dst} (RC/UC in RTR or later). */
    boolean fromConnectedPeer(Gid src, Gid dst) {
        if (type == QpType.UD) {
            return true;
        }
        return addressVectorMatches(dgid, sgid, src, dst);
    }

    /**
     * Whether a packet from {@code src} to {@code dst} belongs to a connection whose address vector
     * has destination GID {@code avDgid} and source GID {@code avSgid} (either null: no connection).
     */
    private static boolean addressVectorMatches(Gid avDgid, Gid avSgid, Gid src, Gid dst) {
        return avDgid != null && avSgid != null && avDgid.equals(src) && avSgid.equals(dst);
    }

    /** The earliest timer deadline (ACK timeout, RNR wait, an owed ACK), or Long.MAX_VALUE. */
    long nextDeadlineNs() {
        return Math.min(completer.nextDeadlineNs(), responder.owedAckDeadlineNs());
    }

    /**
     * Packets that have waited in this QP's inbound queue so far (for tests of the soft device: what
     * the in-process fabric hands over without a packet never does).
     */
    public long inboundQueued() {
        return task.inboundQueued();
    }

    // ------------------------------------------------------------------ completions

    /** The send queue drained (SQD): the QP says so, if asked to. */
    void sqDrained() {
        sqDraining = false;
        if (sqdNotify) {
            events.qpEvent(AsyncEventType.SQ_DRAINED);
        }
    }

    void pushSendCompletion(long wrId, WcStatus status, WcOpcode op, int byteLen) {
        if (!scq.push(wrId, status, op, byteLen, qpn, 0, 0, 0, 0, false)) {
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
                              NetworkHeaderType headerType) {
        if (!rcq.push(wrId, WcStatus.SUCCESS, WcOpcode.RECV, byteLen, qpn, flags, imm, 0, srcQp, solicited,
                headerType)) {
            cqOverflowed();
        }
    }

    private void cqOverflowed() {
        // The CQ raised IBV_EVENT_CQ_ERR; the QPs using it go to the error state.
        EngineEvents.cqOverflow(this);
        if (state != QpState.ERR) {
            enterError();
            events.qpEvent(AsyncEventType.QP_FATAL);
        }
    }

    /** Called by the CQ's owner when a CQ this QP uses overflowed (any thread). */
    public void cqError() {
        task.cqError();
    }

    public CqRing sendCq() {
        return scq;
    }

    public CqRing recvCq() {
        return rcq;
    }
}
