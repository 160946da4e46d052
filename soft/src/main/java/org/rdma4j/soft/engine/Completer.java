// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.AtomicAckEth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.soft.wire.RnrTimer;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * The completer: consumes ACKs, NAKs, READ responses and atomic acknowledgements, retires work
 * requests in order with work completions, and owns the two requester timers (local ACK timeout with
 * retry_cnt, RNR wait with rnr_retry); rxe's rxe_comp.c. A response is checked (state, transport,
 * PSN against what is outstanding), then acts: an ACK finishes the WQEs it covers, a READ response or
 * atomic ACK carries data into the oldest READ/atomic, a NAK fails the WQE or sends the requester back
 * ({@link Requester#rewind}); {@link #retire} then completes finished WQEs in order. Runs only inside
 * the QP task.
 */
final class Completer {
    private static final long NEVER = Long.MAX_VALUE;

    private final QpEngine qp;
    private final SendQueue sq;
    /**
     * The response packets decode into this, and an ACK handed over without a packet fills it (one at
     * a time: both are taken in inside the task). Made on first use.
     */
    private PacketInfo decoded;
    /** Where an atomic's original value is scattered from (RC QPs only: no other type runs atomics). */
    /** Where an atomic's original value is scattered from; created by the first atomic ACK. */
    private MemorySegment scratch;
    /** The highest PSN acknowledged so far. */
    private int lastAckedPsn;
    private boolean rnrWaiting;
    private volatile long retransmitDeadlineNs = NEVER;
    private volatile long rnrDeadlineNs = NEVER;
    /** A request packet went out since the ACK timer was last set (see {@link #armRetransmit}). */
    private boolean sentSinceArmed;
    private int retriesLeft;
    /** A sequence NAK started a retry and nothing has been acknowledged since (rxe: started_retry). */
    private boolean nakRetryStarted;
    private int rnrRetriesLeft;
    private int lastGapRewindPsn = -1;
    /** While the ACK timer is put off for a receive backlog: when the putting off must end. */
    private long deferLimitNs = NEVER;
    /** How often a timer put off for a receive backlog looks again. */
    private static final long BACKLOG_RECHECK_NS = 1_000_000L;
    /** A timer is put off for a receive backlog by at most this many timeout periods. */
    private static final int MAX_BACKLOG_DEFER_PERIODS = 8;

    Completer(QpEngine qp, SendQueue sq) {
        this.qp = qp;
        this.sq = sq;
    }

    /** modify(SQ_PSN): everything before {@code sqPsn} counts as acknowledged. */
    void startAt(int sqPsn) {
        lastAckedPsn = Psn.add(sqPsn, -1);
    }

    /** The highest PSN acknowledged so far (the requester's send window starts after it). */
    int lastAckedPsn() {
        return lastAckedPsn;
    }

    /** An RNR NAK holds the requester until its timer expires. */
    boolean rnrWaiting() {
        return rnrWaiting;
    }

    void reset() {
        disarmTimers();
        rnrWaiting = false;
        lastGapRewindPsn = -1;
        resetRetries();
    }

    void resetRetries() {
        nakRetryStarted = false;
        retriesLeft = qp.retryCnt;
        rnrRetriesLeft = qp.rnrRetry;
    }

    void disarmTimers() {
        sentSinceArmed = false;
        deferLimitNs = NEVER;
        retransmitDeadlineNs = NEVER;
        rnrDeadlineNs = NEVER;
    }

    long nextDeadlineNs() {
        return Math.min(retransmitDeadlineNs, rnrDeadlineNs);
    }

    /**
     * (Re)starts the ACK timer as a request packet goes out: the responder has the whole local ACK
     * timeout from the latest packet sent. (rxe starts it at the first packet and lets it run; on a
     * slow sender, such as a cold JVM under emulation, a many-packet message could then take longer
     * to send than the timeout, and every retry would time out before its last packet was out.)
     */
    void armRetransmit() {
        if (qp.timeoutCode != 0) {
            if (retransmitDeadlineNs == NEVER) {
                sentSinceArmed = false;
                long d = qp.hca.nanoTime() + RnrTimer.ackTimeoutNanos(qp.timeoutCode);
                retransmitDeadlineNs = d;
                qp.hca.timerArmed(qp, d);
            } else {
                // Restarted lazily (no clock read per packet): when the deadline comes, a packet sent
                // since it was set starts one more full period instead of a retry. The responder so
                // gets between one and two timeouts from the latest packet (IBTA lets the timer run
                // up to four times the timeout).
                sentSinceArmed = true;
            }
        }
    }

    // ------------------------------------------------------------------ responses

    /**
     * A positive ACK of {@code psn} handed over without a packet on the in-process path ({@link
     * QpTask#takeDirectAck}): taken in by {@link #receive(PacketInfo)} as its packet would be.
     */
    void receiveAck(int psn) {
        receive(scratch().positiveAck(psn));
    }

    /** A response packet from a link or the in-process fabric. */
    void receive(Packet p, int op) {
        receive(scratch().decode(p, op));
    }

    private PacketInfo scratch() {
        PacketInfo in = decoded;
        if (in == null) {
            in = new PacketInfo();
            decoded = in;
        }
        return in;
    }

    /**
     * Takes one response in, whichever path brought it (rxe's rxe_comp.c): an ACK or NAK, an atomic
     * acknowledgement or a READ response, on an RC QP that sends (RTS or SQD).
     */
    void receive(PacketInfo in) {
        QpState s = qp.state;
        int op = in.opcode;
        if (qp.transport != Opcode.TRANSPORT_RC || in.transport != Opcode.TRANSPORT_RC
                || (s != QpState.RTS && s != QpState.SQD)) {
            qp.hca.counters.inc(Counter.STALE_RESPONSES);
            return;
        }
        int psn = in.psn;
        switch (op) {
            case Opcode.RC_ACKNOWLEDGE -> {
                int syndrome = in.syndrome;
                if (Aeth.isAck(syndrome)) {
                    ack(psn);
                    return;
                }
                EngineEvents.nakReceived(qp, psn, syndrome);
                if (Aeth.isRnrNak(syndrome)) {
                    ack(Psn.add(psn, -1));
                    rnr(psn, Aeth.rnrTimerCode(syndrome));
                } else {
                    switch (syndrome) {
                        case Aeth.NAK_PSN_SEQ_ERR -> sequenceNak(psn);
                        case Aeth.NAK_INVALID_REQUEST -> fail(psn, WcStatus.REM_INV_REQ_ERR);
                        case Aeth.NAK_REMOTE_ACCESS -> fail(psn, WcStatus.REM_ACCESS_ERR);
                        case Aeth.NAK_REMOTE_OP -> fail(psn, WcStatus.REM_OP_ERR);
                        // an unknown NAK code is a remote operational error (rxe), not something to retry
                        default -> fail(psn, WcStatus.REM_OP_ERR);
                    }
                }
            }
            case Opcode.RC_ATOMIC_ACKNOWLEDGE -> atomicAcknowledge(in.packet, psn);
            case Opcode.RC_RDMA_READ_RESPONSE_FIRST, Opcode.RC_RDMA_READ_RESPONSE_MIDDLE,
                 Opcode.RC_RDMA_READ_RESPONSE_LAST, Opcode.RC_RDMA_READ_RESPONSE_ONLY ->
                    readResponse(in.packet, op, psn);
            default -> qp.hca.counters.inc(Counter.MALFORMED);
        }
    }

    /**
     * A PSN sequence error NAK: everything before {@code psn} is acknowledged, the rest is sent again.
     * The retransmission is a retry (as in rxe): a NAK that acknowledges nothing new spends one of
     * retry_cnt, so a responder that NAKs forever ends in RETRY_EXC_ERR rather than a resend loop
     * (retry_cnt 7 is 7 retries here, as IBTA has it; rxe never runs out at 7). As
     * rxe's {@code started_retry}, one retry sequence at a time: until something is acknowledged, further
     * NAKs are answers to packets already in flight and neither resend nor spend (only a timeout does).
     */
    private void sequenceNak(int psn) {
        qp.hca.counters.inc(Counter.RCVD_SEQ_ERR);
        if (Psn.compare(psn, Psn.add(lastAckedPsn, 1)) < 0) {
            // Behind what is already acknowledged: a NAK the network delayed or duplicated. rxe's
            // check_psn ignores it; resending (and spending a retry) for it would be wrong.
            qp.hca.counters.inc(Counter.STALE_RESPONSES);
            return;
        }
        if (ack(Psn.add(psn, -1))) {
            qp.requester.rewind(psn, EngineEvents.CAUSE_SEQUENCE_NAK);
            return;
        }
        if (sq.containing(psn) == null) {
            return; // about nothing outstanding: stale
        }
        if (nakRetryStarted) {
            return;
        }
        nakRetryStarted = true;
        if (retriesLeft == 0) {
            qp.hca.counters.inc(Counter.RETRY_EXCEEDED_ERR);
            fail(psn, WcStatus.RETRY_EXC_ERR);
            return;
        }
        retriesLeft--;
        qp.hca.counters.inc(Counter.COMPLETER_RETRY_ERR);
        qp.requester.rewind(psn, EngineEvents.CAUSE_SEQUENCE_NAK);
    }

    /** Everything up to and including {@code psn} was executed by the responder; true on progress. */
    private boolean ack(int psn) {
        boolean progress = false;
        for (long i = sq.tail(), end = sq.cursor(); i < end; i++) {
            SendWqe w = sq.at(i);
            if (w.done || w.opcode.isLocal()) {
                continue;
            }
            if (!w.started || Psn.compare(w.lastPsn, psn) > 0) {
                break;
            }
            if (w.isReadOrAtomic()) {
                // An ACK beyond a READ/atomic whose response has not arrived: the response was lost.
                if (qp.requester.rewind(w.opcode == WrOpcode.RDMA_READ ? w.respPsn : w.firstPsn,
                        EngineEvents.CAUSE_LOST_RESPONSE)) {
                    progress = true;
                }
                break;
            }
            w.done = true;
            progress = true;
        }
        if (Psn.compare(psn, lastAckedPsn) > 0 && Psn.compare(psn, qp.requester.nextPsn()) < 0) {
            lastAckedPsn = psn;
            progress = true;
        }
        if (progress) {
            onProgress();
        }
        return progress;
    }

    /** Responses for {@code psn} arrived: it counts as acknowledged for the send window. */
    private void advanceAcked(int psn) {
        if (Psn.compare(psn, lastAckedPsn) > 0) {
            lastAckedPsn = psn;
        }
    }

    private void onProgress() {
        deferLimitNs = NEVER;
        nakRetryStarted = false;
        retriesLeft = qp.retryCnt;
        rnrRetriesLeft = qp.rnrRetry;
        sentSinceArmed = false;
        if (sq.hasOutstanding() && qp.timeoutCode != 0) {
            long d = qp.hca.nanoTime() + RnrTimer.ackTimeoutNanos(qp.timeoutCode);
            retransmitDeadlineNs = d;
            qp.hca.timerArmed(qp, d);
        } else {
            retransmitDeadlineNs = NEVER;
        }
    }

    private void rnr(int psn, int timerCode) {
        qp.hca.counters.inc(Counter.RCVD_RNR_ERR);
        if (sq.containing(psn) == null) {
            return;
        }
        if (qp.rnrRetry != 7) {
            if (rnrRetriesLeft == 0) {
                qp.hca.counters.inc(Counter.RETRY_RNR_EXCEEDED_ERR);
                fail(psn, WcStatus.RNR_RETRY_EXC_ERR);
                return;
            }
            rnrRetriesLeft--;
        }
        qp.requester.rewind(psn, EngineEvents.CAUSE_RNR_NAK);
        rnrWaiting = true;
        retransmitDeadlineNs = NEVER;
        long d = qp.hca.nanoTime() + RnrTimer.nanos(timerCode);
        rnrDeadlineNs = d;
        qp.hca.timerArmed(qp, d);
    }

    /** The request containing {@code psn} failed with {@code status}: complete it and go to ERR. */
    private void fail(int psn, WcStatus status) {
        SendWqe w = sq.containing(psn);
        if (w == null) {
            w = sq.oldestPending();
            if (w == null) {
                return;
            }
        } else {
            ack(Psn.add(w.firstPsn, -1));
        }
        EngineLog.requesterFailed(qp, psn, status);
        w.finish(status);
        retire();
        if (qp.state != QpState.ERR) {
            qp.enterError();
        }
    }

    private void readResponse(Packet p, int op, int psn) {
        SendWqe w = sq.oldestReadOrAtomic();
        if (w == null || w.opcode != WrOpcode.RDMA_READ || Psn.compare(psn, w.firstPsn) < 0
                || Psn.compare(psn, w.lastPsn) > 0) {
            qp.hca.counters.inc(Counter.STALE_RESPONSES);
            return;
        }
        if (psn != w.respPsn) {
            qp.hca.counters.inc(Counter.STALE_RESPONSES);
            if (Psn.compare(psn, w.respPsn) > 0 && lastGapRewindPsn != w.respPsn) {
                lastGapRewindPsn = w.respPsn; // a response was lost: ask again from there, once
                qp.requester.rewind(w.respPsn, EngineEvents.CAUSE_LOST_RESPONSE);
            }
            return;
        }
        ack(Psn.add(w.firstPsn, -1));
        int index = Psn.diff(psn, w.firstPsn);
        long offset = (long) index * qp.mtuBytes;
        int expected = (int) Math.min(qp.mtuBytes, w.totalLength - offset);
        boolean lastPacket = psn == w.lastPsn;
        // a long READ is asked for in pieces, whose responses each end with LAST or ONLY (ReadPieces)
        boolean requestEnd = ReadPieces.endsRequest(index, Psn.diff(w.lastPsn, w.firstPsn) + 1);
        boolean positionOk = requestEnd ? (op == Opcode.RC_RDMA_READ_RESPONSE_LAST
                || op == Opcode.RC_RDMA_READ_RESPONSE_ONLY) : (op == Opcode.RC_RDMA_READ_RESPONSE_FIRST
                || op == Opcode.RC_RDMA_READ_RESPONSE_MIDDLE);
        if (p.payloadLength != expected || !positionOk) {
            qp.hca.counters.inc(Counter.MALFORMED);
            return;
        }
        int st = scatter(w, offset, p, null, expected);
        if (st == Scatter.SOURCE_GONE) {
            // The responder's memory was freed after it answered: as if lost; asked again, it NAKs.
            qp.hca.counters.inc(Counter.FREED_MEMORY);
            return;
        }
        if (st != Scatter.OK) {
            w.status = WcStatus.LOC_PROT_ERR;
            w.done = true;
            retire();
            if (qp.state != QpState.ERR) {
                qp.enterError();
            }
            return;
        }
        w.respPsn = Psn.add(psn, 1);
        advanceAcked(psn);
        if (requestEnd) {
            qp.requester.readOrAtomicAnswered();
        }
        if (lastPacket) {
            w.done = true;
        }
        lastGapRewindPsn = -1;
        onProgress();
    }

    private void atomicAcknowledge(Packet p, int psn) {
        SendWqe w = sq.oldestReadOrAtomic();
        if (w == null || !w.opcode.isAtomic() || w.firstPsn != psn) {
            qp.hca.counters.inc(Counter.STALE_RESPONSES);
            return;
        }
        ack(Psn.add(psn, -1));
        long original = AtomicAckEth.originalValueAt(p.buffer, Opcode.offsetOf(Opcode.RC_ATOMIC_ACKNOWLEDGE,
                Opcode.HEADER_ATOMIC_ACK_ETH));
        if (scratch == null) {
            scratch = MemorySegment.ofArray(new byte[8]);
        }
        scratch.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, original);
        advanceAcked(psn);
        w.done = true;
        if (scatter(w, 0, null, scratch, 8) != Scatter.OK) {
            w.status = WcStatus.LOC_PROT_ERR; // the remote atomic still ran
            retire();
            if (qp.state != QpState.ERR) {
                qp.enterError();
            }
            return;
        }
        onProgress();
    }

    /** Writes response data into the local scatter list of {@code w} at {@code offset}. */
    private int scatter(SendWqe w, long offset, Packet p, MemorySegment src, int len) {
        return Scatter.into(qp, w.addr, w.length, w.lkey, w.numSge, offset, p, src, len);
    }

    // ------------------------------------------------------------------ timers

    /** Handles expired timers; true on progress. */
    boolean checkTimers() {
        if (retransmitDeadlineNs == NEVER && rnrDeadlineNs == NEVER) {
            return false;
        }
        long now = qp.hca.nanoTime();
        boolean progress = false;
        if (now >= rnrDeadlineNs) {
            rnrDeadlineNs = NEVER;
            rnrWaiting = false;
            progress = true;
        }
        if (now >= retransmitDeadlineNs && sentSinceArmed) {
            sentSinceArmed = false;
            long d = now + RnrTimer.ackTimeoutNanos(qp.timeoutCode);
            retransmitDeadlineNs = d;
            qp.hca.timerArmed(qp, d);
        } else if (now >= retransmitDeadlineNs) {
            retransmitDeadlineNs = NEVER;
            SendWqe w = sq.oldestPending();
            if (w == null) {
                return progress;
            }
            if (deferForBacklog(now)) {
                return progress;
            }
            if (retriesLeft == 0) {
                qp.hca.counters.inc(Counter.RETRY_EXCEEDED_ERR);
                fail(w.firstPsn, WcStatus.RETRY_EXC_ERR);
                return true;
            }
            retriesLeft--;
            qp.hca.counters.inc(Counter.COMPLETER_RETRY_ERR);
            int from;
            if (w.opcode == WrOpcode.RDMA_READ) {
                from = w.respPsn;
            } else if (w.opcode.isAtomic()) {
                from = w.firstPsn;
            } else {
                int afterAck = Psn.add(lastAckedPsn, 1);
                from = Psn.compare(afterAck, w.firstPsn) > 0 && Psn.compare(afterAck, w.lastPsn) <= 0
                        ? afterAck : w.firstPsn;
            }
            qp.requester.rewind(from, EngineEvents.CAUSE_TIMEOUT);
            progress = true;
        }
        return progress;
    }

    /**
     * The local ACK timeout measures how long the responder takes; packets already received but not
     * yet taken in by this device may hold the ACK (the progress agent takes in what waits in the link
     * before it runs a due timer; this is for what it could not take: the link's receive thread is
     * behind, as under a burst, or is taking packets in now). While that is so the timeout does not count: it looks again
     * in {@value #BACKLOG_RECHECK_NS} ns, for at most {@value #MAX_BACKLOG_DEFER_PERIODS} timeout
     * periods, then counts as usual. Retransmitting then would only add to the backlog.
     */
    private boolean deferForBacklog(long now) {
        if (!qp.hca.receiveBacklogged()) {
            deferLimitNs = NEVER;
            return false;
        }
        if (deferLimitNs == NEVER) {
            deferLimitNs = now + MAX_BACKLOG_DEFER_PERIODS * RnrTimer.ackTimeoutNanos(qp.timeoutCode);
            qp.hca.counters.inc(Counter.TIMEOUT_DEFERRED);
        }
        if (now >= deferLimitNs) {
            deferLimitNs = NEVER;
            return false;
        }
        long d = now + BACKLOG_RECHECK_NS;
        retransmitDeadlineNs = d;
        qp.hca.timerArmed(qp, d);
        return true;
    }

    // ------------------------------------------------------------------ retiring

    /** Completes finished work requests in order; true on progress. */
    boolean retire() {
        boolean progress = false;
        SendWqe w;
        while ((w = sq.oldestStarted()) != null && w.done) {
            if (w.opcode.isAtomic()) {
                qp.requester.readOrAtomicAnswered(); // a READ's pieces were counted off as answered
            }
            if (w.status != WcStatus.SUCCESS) {
                retireOldest(w, w.status, true);
                qp.enterError();
                return true;
            }
            retireOldest(w, WcStatus.SUCCESS, w.signaled);
            progress = true;
        }
        if (progress && !sq.hasOutstanding()) {
            retransmitDeadlineNs = NEVER;
        }
        if (qp.sqDraining && sq.tail() >= qp.sqdLimit && sq.allRetiredUpToCursor()
                && !(sq.hasAtCursor() && sq.atCursor().started)) {
            qp.sqDrained();
        }
        return progress;
    }

    /** Completes every posted send: finished ones as they ended, the rest with WR_FLUSH_ERR. */
    void flushSendQueue() {
        long head = sq.head();
        while (sq.tail() < head) {
            SendWqe w = sq.at(sq.tail());
            if (w.done && w.status == WcStatus.SUCCESS) {
                retireOldest(w, WcStatus.SUCCESS, w.signaled);
            } else {
                retireOldest(w, w.done ? w.status : WcStatus.WR_FLUSH_ERR, true);
            }
        }
        sq.skipToHead();
        qp.requester.flushed();
        disarmTimers();
        rnrWaiting = false;
    }

    /**
     * Retires the oldest send WQE: frees its slot first (a completion the application can see means
     * the slot is free to post again), then writes the completion if it is signaled or failed.
     */
    private void retireOldest(SendWqe w, WcStatus status, boolean completion) {
        long wrId = w.wrId;
        WcOpcode op = w.opcode.completionOpcode();
        int byteLen = w.opcode.isAtomic() ? 8 : (int) w.totalLength;
        boolean send = w.opcode.isSend();
        sq.retireOldest();
        if (status == WcStatus.SUCCESS && send) {
            qp.hca.counters.inc(Counter.RDMA_SENDS); // as rxe: every SEND that completes, signaled or not
        }
        if (completion) {
            qp.pushSendCompletion(wrId, status, op, byteLen);
        }
    }
}
