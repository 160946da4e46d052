// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.link.DirectLink;
import org.rdma4j.soft.link.Packet;
import org.rdma4j.soft.link.Route;
import org.rdma4j.soft.wire.Bth;
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
 * One queue pair's transport engine: the QP attributes the data path reads, and one run-to-completion
 * {@link Task} that dispatches to the {@link Requester}, {@link Responder} and {@link Completer} (the
 * three state machines rxe runs as separate tasks; here one task runs them in turn, so the transport
 * state needs no locks). The send queue is the {@link SendQueue}'s; the receive queue the
 * {@link RecvQueue}'s. This class holds the task and its dispatch, the QP state transitions, and the
 * completion queues. Posting is thread safe; everything else runs inside the task.
 */
public final class QpEngine {
    /** Settings a QP is created with. */
    public record Config(QpType type, Pd pd, CqRing sendCq, CqRing recvCq, RecvQueue recvQueue,
                         boolean usesSrq, int maxSendWr, int maxSendSge, int maxInline, boolean sqSigAll,
                         AsyncEventSink events) {
    }

    static final int INBOUND_CAPACITY = 4096;
    /** The inbound ring starts this small and doubles up to {@link #INBOUND_CAPACITY} as bursts need it. */
    static final int INBOUND_INITIAL = 8;
    /** Tasks one thread may run nested inside each other before deferring to the progress thread. */
    static final int MAX_INLINE_DEPTH = 3;
    private static final ThreadLocal<Nesting> NESTING = ThreadLocal.withInitial(Nesting::new);

    /**
     * How many tasks one thread runs nested inside each other (the bound {@value #MAX_INLINE_DEPTH}):
     * only {@link #thread} reads or writes {@link #depth}.
     */
    static final class Nesting {
        final Thread thread = Thread.currentThread();
        int depth;
    }

    /**
     * The {@link Nesting} of the thread that asked this QP for it last: when the same thread comes
     * again (the usual case: a poster's WRITEs to this peer, its ACKs back) it is found here without
     * the thread-local lookup. Written and read by any thread without ordering: a reference read
     * racily still shows its final {@code thread} (JLS 17.5), and a nesting whose thread is not the
     * caller's is never used, so a stale or foreign entry costs only the lookup.
     */
    private Nesting lastNesting;

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

    private final SendQueue sq;
    /**
     * Where this RC/UC QP's packets go when the link is a {@link DirectLink}: resolved on the first
     * packet after the address vector was set, then reused while valid (task only; null otherwise).
     */
    private Route route;

    // Inbound packets, filled by delivering threads, drained by the task (guarded by inboundLock). An idle
    // QP holds no ring at all: most of a large table never receives a burst.
    private final Object inboundLock = new Object();
    private Packet[] inbound;
    /** Advanced by producers under inboundLock; volatile so the task may see an empty queue without it. */
    private volatile long inHead;
    /** Advanced by the task only (under inboundLock, which producers read it under). */
    private long inTail;

    // The device's timer heap (see TimerHeap): slot guarded by it, the queued deadline read without lock.
    int timerSlot = -1;
    volatile long timerQueuedNs = Long.MAX_VALUE;

    private volatile boolean cqErrorPending;
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
        sq = new SendQueue(this);
        if (type == QpType.UD) {
            mtuBytes = 4096; // UD has no path MTU attribute: the port's active MTU applies
        }
        requester = new Requester(this, sq);
        responder = new Responder(this);
        completer = new Completer(this, sq);
        task = new Task(this::doWork);
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
                takeInQueued();
            }
            apply(c);
        });
    }

    /** Handles the inbound packets queued so far (inside the task) and sends the ACK they call for. */
    private void takeInQueued() {
        Packet p;
        boolean any = takeDirectAckIn();
        while ((p = nextInbound()) != null) {
            any = true;
            handle(p);
        }
        if (any) {
            responder.flushAck();
        }
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
            route = null;
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
        drainInbound();
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
        destroyed = true;
        task.runExclusive(() -> {
            state = QpState.RESET;
            peerCache = null;
            drainInbound();
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

    /** Sends one of this QP's packets (task only): on its resolved route when there is one. */
    void send(Packet p) {
        Route r = directRoute();
        if (r != null) {
            hca.send(p, r);
        } else {
            hca.send(p);
        }
    }

    /** Sends {@code count} of this QP's packets at once, in order, through the link (task only). */
    void send(Packet[] packets, int count) {
        hca.send(packets, count);
    }

    /**
     * The route to the connected peer on an in-process fabric ({@link DirectLink}), or null (UD,
     * another link, no such device). Task only.
     */
    Route directRoute() {
        Route r = route;
        if (r != null && r.valid()) {
            return r;
        }
        if (type == QpType.UD) {
            return null;
        }
        r = hca.resolve(dgid);
        route = r;
        return r;
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
     * A packet for this QP arrived (any thread). When this thread may run the task (not nested too
     * deep), the task is idle and nothing is queued before the packet, the packet is handled at once
     * inside the task, without going through the inbound queue; otherwise it is queued for the task.
     */
    void inbound(Packet p) {
        if (task.runningHere()) {
            // this thread runs the task further up its stack (the peer answered inside our send): queue
            // it, the running pass takes it next
            if (enqueueInbound(p)) {
                task.again();
            }
            return;
        }
        Nesting n = nesting();
        if (n.depth < MAX_INLINE_DEPTH && task.tryAcquire()) {
            n.depth++;
            try {
                if (inTail == inHead) { // the task is ours: only producers move inHead, and we saw it empty
                    handle(p);
                    responder.flushAck();
                } else {
                    enqueueInbound(p);
                }
            } finally {
                try {
                    task.runAcquired();
                } finally {
                    n.depth--;
                }
            }
            return;
        }
        if (enqueueInbound(p)) {
            schedule(n);
        }
    }

    /**
     * A positive ACK of this QP's responder for the connected QP's requester on an in-process fabric,
     * without a packet (see {@link #takeDirectAck}); false when it must go as the packet (another
     * link, no such peer, a port down, the peer cannot take it now). Task only.
     */
    boolean ackDirect(int psn) {
        if (transport != Opcode.TRANSPORT_RC) {
            return false;
        }
        QpEngine peer = directPeer();
        if (peer == null || !peer.takeDirectAck(psn)) {
            return false;
        }
        packetCounts.sent();
        return true;
    }

    /**
     * The connected QP on an in-process fabric's other device, when both ports are up and it takes this
     * QP's packets ({@link #fromConnectedPeer}); else null (then the packet goes). Task only.
     *
     * <p>The QP found in the peer device's table is kept with the route and destination QPN it was
     * found for, and used again while all three hold and it is not {@link #destroyed}: a QP leaves the
     * table only when destroyed, so a live one is still the table's entry for its number, and its
     * number cannot have been given to another QP. Everything else is checked on every call as before
     * (ports, the peer's address vector here, its state and PSNs in {@code takeDirectWrite}).
     */
    QpEngine directPeer() {
        Route r = directRoute();
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

    /** A positive ACK handed over without a packet, not yet taken in (task only, see {@link #takeDirectAck}). */
    private boolean directAckPending;
    private int directAckPsn;

    /**
     * A positive ACK from the connected QP's responder, without a packet: taken when its packet would
     * be the next thing the task takes in (nothing queued) and this thread runs the task further up
     * its stack (the ACK answers our own send: the running pass takes it next; a later ACK replaces
     * one still waiting) or may take the idle task now. The task takes it in before any packet queued
     * after it ({@link Completer#receiveAck}). False otherwise: the caller sends the packet.
     */
    boolean takeDirectAck(int psn) {
        if (task.runningHere()) {
            if (inTail != inHead) {
                return false;
            }
            if (directAckPending) {
                // A positive ACK acknowledges every PSN up to its own (IBA 9.7.5.1.3: ACKs may be
                // coalesced), so a later one stands for both: Completer.ack of the later PSN leaves the
                // state that both in turn would. Without this, a pass that sends many WRITEs (a post
                // list) after a quarter of the send queue waits for retirement, where every WRITE asks
                // for an ACK, turned all ACKs but the first into packets through the inbound queue.
                if (Psn.diff(psn, directAckPsn) <= 0) {
                    return false;
                }
                directAckPsn = psn;
                packetCounts.received();
                return true;
            }
            directAckPsn = psn;
            directAckPending = true;
            packetCounts.received();
            task.again();
            return true;
        }
        Nesting n = nesting();
        if (n.depth >= MAX_INLINE_DEPTH || !task.tryAcquire()) {
            return false;
        }
        boolean took = false;
        n.depth++;
        try {
            if (inTail == inHead && !directAckPending) {
                directAckPsn = psn;
                directAckPending = true;
                packetCounts.received();
                took = true;
            }
        } finally {
            try {
                task.runAcquired();
            } finally {
                n.depth--;
            }
        }
        return took;
    }

    /** Takes in the ACK handed over without a packet, if one waits; true if one did. Task only. */
    private boolean takeDirectAckIn() {
        if (!directAckPending) {
            return false;
        }
        directAckPending = false;
        completer.receiveAck(directAckPsn);
        return true;
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

    /**
     * An RDMA WRITE ONLY from the connected QP's requester on an in-process fabric, without a packet
     * (see {@code Requester.sendDirect}): taken in when {@link #inbound} would handle its packet at
     * once (this thread may run the task, it is idle and nothing is queued) and the responder would
     * take the packet in unchanged ({@code Responder.takeWrite}); then the ACK it calls for is sent
     * and the task runs, as after a delivered packet. False with nothing changed otherwise: the caller
     * sends the packet.
     */
    boolean takeDirectWrite(int psn, int pkey, boolean ackReq, long va, int rkey, java.lang.foreign.MemorySegment src,
                            long srcOffset, int len) {
        return takeDirect(false, psn, pkey, ackReq, false, va, rkey, false, 0, src, srcOffset, len);
    }

    /**
     * A SEND ONLY from the connected QP's requester on an in-process fabric, without a packet (see
     * {@code Requester.sendDirect}), on the terms of {@link #takeDirectWrite}; the responder's are
     * {@code Responder.takeSend}.
     */
    boolean takeDirectSend(int psn, int pkey, boolean ackReq, boolean solicited, boolean withImm, int imm,
                           java.lang.foreign.MemorySegment src, long srcOffset, int len) {
        return takeDirect(true, psn, pkey, ackReq, solicited, 0, 0, withImm, imm, src, srcOffset, len);
    }

    private boolean takeDirect(boolean send, int psn, int pkey, boolean ackReq, boolean solicited, long va, int rkey,
                               boolean withImm, int imm, java.lang.foreign.MemorySegment src, long srcOffset,
                               int len) {
        if (task.runningHere()) {
            return false;
        }
        Nesting n = nesting();
        if (n.depth >= MAX_INLINE_DEPTH || !task.tryAcquire()) {
            return false;
        }
        boolean took = false;
        n.depth++;
        try {
            if (inTail == inHead && (send
                    ? responder.takeSend(psn, pkey, ackReq, solicited, withImm, imm, src, srcOffset, len)
                    : responder.takeWrite(psn, pkey, ackReq, va, rkey, src, srcOffset, len))) {
                took = true;
                packetCounts.received();
                responder.flushAck();
            }
        } finally {
            try {
                if (took && state != QpState.ERR) {
                    // an executed WRITE or SEND leaves the requester and completer nothing to do: no pass,
                    // unless the task was scheduled meanwhile (anything that arrives while we hold it does
                    // so); a SEND whose receive failed moved the QP to ERR, whose flush a pass does
                    task.releaseAcquired();
                } else {
                    task.runAcquired();
                }
            } finally {
                n.depth--;
            }
        }
        return took;
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
            long h = inHead;
            ring[(int) (h & (ring.length - 1))] = p;
            inHead = h + 1;
        }
        return true;
    }

    /**
     * Packets that have waited in this QP's inbound queue so far (for tests of the soft device: what
     * the in-process fabric hands over without a packet never does).
     */
    public long inboundQueued() {
        return inHead;
    }

    /** A ring twice as large (the first one {@link #INBOUND_INITIAL}) with the queued packets in order. */
    private Packet[] growInbound(Packet[] old, int queued) {
        Packet[] ring = new Packet[old == null ? INBOUND_INITIAL : old.length * 2];
        for (int i = 0; i < queued; i++) { // the positions stay: only the task moves inTail
            long at = inTail + i;
            ring[(int) (at & (ring.length - 1))] = old[(int) (at & (old.length - 1))];
        }
        inbound = ring;
        return ring;
    }

    /**
     * Runs the task on this thread unless this thread is already inside {@value #MAX_INLINE_DEPTH}
     * tasks (delivery between devices nests: a requester's send runs the peer's responder, whose ACK
     * runs ...); then the device's progress thread runs it, so stacks stay shallow.
     */
    void schedule() {
        schedule(nesting());
    }

    private void schedule(Nesting n) {
        if (n.depth >= MAX_INLINE_DEPTH) {
            hca.defer(this);
            return;
        }
        n.depth++;
        try {
            task.run();
        } finally {
            n.depth--;
        }
    }

    /** The calling thread's {@link Nesting}: the one this QP saw last if it is the caller's, else the thread-local. */
    private Nesting nesting() {
        Nesting n = lastNesting;
        if (n == null || n.thread != Thread.currentThread()) {
            n = NESTING.get();
            lastNesting = n;
        }
        return n;
    }

    private Packet nextInbound() {
        if (inTail == inHead) {
            return null; // the common case, without the lock
        }
        synchronized (inboundLock) {
            Packet[] ring = inbound;
            int i = (int) (inTail++ & (ring.length - 1));
            Packet p = ring[i];
            ring[i] = null;
            return p;
        }
    }

    private void drainInbound() {
        directAckPending = false;
        Packet p;
        while ((p = nextInbound()) != null) {
            p.release();
        }
    }

    /** Runs the QP task (progress thread). */
    void runTask() {
        timerRun = true;
        schedule();
    }

    /** Set by the progress agent before it runs the task: the task looks at its timers and owed ACK. */
    private volatile boolean timerRun;

    /** The earliest timer deadline (ACK timeout, RNR wait, an owed ACK), or Long.MAX_VALUE. */
    long nextDeadlineNs() {
        return Math.min(completer.nextDeadlineNs(), responder.owedAckDeadlineNs());
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
        progress = takeDirectAckIn(); // it came before anything queued now
        while ((p = nextInbound()) != null) {
            progress = true;
            handle(p);
        }
        if (progress) {
            responder.flushAck(); // one acknowledgement for everything this pass took in
        }
        boolean timers = timerRun;
        if (timers) {
            timerRun = false;
            responder.sendOwedAck();
        }
        QpState s = state;
        if (s == QpState.ERR) {
            if (!sq.isEmpty()) {
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
        if (timers) {
            // Deadlines are the progress agent's: it runs the task when one is due (or pushed back),
            // so the other passes need not read the clock.
            progress |= completer.checkTimers();
        }
        boolean sent = requester.step();
        boolean retired = completer.retire();
        if (sent && !retired && !progress && !timers && requester.stepOnlySent()) {
            // This pass only sent (nothing taken in, no timer, nothing retired, no local operation):
            // a further pass would find everything as this one left it, since whatever else could
            // give it work (a post, an arrival, an ACK handed over, a timer, a CQ error) schedules the
            // task or calls again() itself. See docs/decisions/0002-one-task-per-qp.md.
            return false;
        }
        return progress | sent | retired;
    }

    /** Takes one arrived packet in (inside the task) and releases it. */
    private void handle(Packet p) {
        try {
            int op = Bth.opcodeOf(p.buffer);
            if (!Opcode.isValid(op) || p.headerLength < Opcode.headerLength(op)) {
                hca.counters.inc(Counter.MALFORMED);
            } else if (Opcode.isResponse(op)) {
                completer.receive(p, op);
            } else {
                responder.receive(p, op);
            }
        } catch (IllegalStateException | IndexOutOfBoundsException e) {
            // registered memory went away under us (a closed arena) or a hostile length: drop
            hca.counters.inc(Counter.MALFORMED);
        } finally {
            p.release();
        }
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
