// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * A queue pair's run-to-completion task and what feeds it (rxe_task.c and the dispatch of
 * rxe_rcv.c): the inbound queue that delivering threads fill and the task drains, the nesting bound
 * that keeps a thread from running too many tasks inside each other, the pass itself ({@link
 * #doWork}: what arrived, timers, then the {@link Requester} and {@link Completer}), and the
 * hand-overs of the in-process fabric, which take a one-packet WRITE, SEND or positive ACK in without
 * a packet when the packet would be taken in at once and unchanged. The QP's attributes, state
 * transitions and completions are {@link QpEngine}'s.
 */
final class QpTask {
    private final QpEngine qp;
    private final Task task;

    QpTask(QpEngine qp) {
        this.qp = qp;
        this.task = new Task(this::doWork);
    }

    /** Runs the task now on this thread, or has its running owner go round again ({@link Task#run}). */
    void run() {
        task.run();
    }

    /** Runs {@code r} exclusively of the task ({@link Task#runExclusive}). */
    void runExclusive(Runnable r) {
        task.runExclusive(r);
    }

    /** A CQ this QP uses overflowed (any thread): the task moves the QP to ERR. */
    void cqError() {
        cqErrorPending = true;
        task.run();
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


    // Inbound packets, filled by delivering threads, drained by the task (guarded by inboundLock). An idle
    // QP holds no ring at all: most of a large table never receives a burst.
    private final Object inboundLock = new Object();
    private Packet[] inbound;
    /** Advanced by producers under inboundLock; volatile so the task may see an empty queue without it. */
    private volatile long inHead;
    /** Advanced by the task only (under inboundLock, which producers read it under). */
    private long inTail;


    /** A CQ this QP uses overflowed: the next pass moves the QP to ERR (set by any thread). */
    private volatile boolean cqErrorPending;

    /** Handles the inbound packets queued so far (inside the task) and sends the ACK they call for. */
    void takeInQueued() {
        Packet p;
        boolean any = takeDirectAckIn();
        while ((p = nextInbound()) != null) {
            any = true;
            handle(p);
        }
        if (any) {
            qp.responder.flushAck();
        }
    }


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
                    qp.responder.flushAck();
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
                qp.packetCounts.received();
                return true;
            }
            directAckPsn = psn;
            directAckPending = true;
            qp.packetCounts.received();
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
                qp.packetCounts.received();
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
        qp.completer.receiveAck(directAckPsn);
        return true;
    }


    /**
     * A one-packet WRITE or SEND from the connected QP's requester on the in-process path, without a
     * packet ({@code Path.InProcess#handOver}): taken in when {@link #inbound} would handle its packet
     * at once (this thread may run the task, it is idle and nothing is queued before it), and then
     * checked and executed by {@link Responder#receive(PacketInfo)} exactly as its packet would be
     * (a NAK or an RNR NAK goes back to the requester as a packet); the ACK it calls for is sent and
     * the task runs, as after a delivered packet. False with nothing changed otherwise, and when the
     * sender's memory went away during the copy: the caller then sends the packet.
     */
    boolean takeHandOver(PacketInfo in) {
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
            if (inTail == inHead) {
                qp.responder.receive(in);
                took = !in.sourceGone;
                if (took) {
                    qp.packetCounts.received();
                }
                qp.responder.flushAck();
            }
        } finally {
            try {
                if (took && qp.state != QpState.ERR) {
                    // an executed WRITE or SEND leaves the requester and completer nothing to do: no pass,
                    // unless the task was scheduled meanwhile (anything that arrives while we hold it does
                    // so); a request that moved the QP to ERR leaves a flush to do, which a pass does
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
                    qp.hca.counters.inc(Counter.INBOUND_OVERFLOW);
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

    /** Packets that have waited in the inbound queue so far ({@link QpEngine#inboundQueued}). */
    long inboundQueued() {
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
            qp.hca.defer(qp);
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

    void drainInbound() {
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


    private boolean doWork() {
        boolean progress = false;
        if (cqErrorPending) {
            cqErrorPending = false;
            if (qp.state != QpState.ERR && qp.state != QpState.RESET) {
                qp.enterError();
            }
        }
        Packet p;
        progress = takeDirectAckIn(); // it came before anything queued now
        while ((p = nextInbound()) != null) {
            progress = true;
            handle(p);
        }
        if (progress) {
            qp.responder.flushAck(); // one acknowledgement for everything this pass took in
        }
        boolean timers = timerRun;
        if (timers) {
            timerRun = false;
            qp.responder.sendOwedAck();
        }
        QpState s = qp.state;
        if (s == QpState.ERR) {
            if (!qp.sq.isEmpty()) {
                qp.completer.flushSendQueue();
            }
            if (!qp.usesSrq && qp.rq.count() > 0) {
                qp.rq.drain(r -> qp.pushRecvCompletion(r.wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, 0, 0, 0, 0,
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
            progress |= qp.completer.checkTimers();
        }
        boolean sent = qp.requester.step();
        boolean retired = qp.completer.retire();
        if (sent && !retired && !progress && !timers && qp.requester.stepOnlySent()) {
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
                qp.hca.counters.inc(Counter.MALFORMED);
            } else if (Opcode.isResponse(op)) {
                qp.completer.receive(p, op);
            } else {
                qp.responder.receive(p, op);
            }
        } catch (IllegalStateException | IndexOutOfBoundsException e) {
            // registered memory went away under us (a closed arena) or a hostile length: drop
            qp.hca.counters.inc(Counter.MALFORMED);
        } finally {
            p.release();
        }
    }
}
