// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.WcFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * The responder: executes incoming requests. It checks PSN order (NAKing a gap once, answering
 * duplicates without executing them twice: SEND/WRITE re-ACKed, READ replayed from memory, atomics
 * answered with the saved original value), opcode sequence, the QP's access flags, rkeys (PD, access,
 * range, type-2 window QP: {@link MemKey#check}), consumes receive WQEs (RNR NAK when there is none),
 * and acknowledges through its {@link Acknowledger}; rxe's rxe_resp.c. {@link #receive} runs rxe's
 * states in order: check the header (transport, P_Key, length), check the PSN (duplicate, out of
 * sequence, in order), check the opcode sequence, then execute (send, write, read, atomic), complete
 * and acknowledge. Runs only inside the QP task.
 */
final class Responder {
    private static final int ACK_SYNDROME = Acknowledger.ACK_SYNDROME;
    private static final int NONE = 0;
    private static final int SEND = 1;
    private static final int WRITE = 2;
    /**
     * UC: a PSN at most this far behind the expected one is a late duplicate from the network and is
     * dropped; further behind, the sender has started over and a FIRST/ONLY packet begins a new message.
     */
    static final int UC_RECENT_PSNS = 1024;
    /** The longest RDMA READ or WRITE a RETH may ask for (2^31 bytes, as rxe checks it). */
    static final long MAX_DMA_BYTES = 1L << 31;

    private final QpEngine qp;
    private final Acknowledger acks;
    private final UdReceiver ud;

    private int ePsn;
    private boolean nakSent;
    private int inProgress = NONE;
    /** The receive WQE of the message in progress; created by the first SEND or WRITE with immediate. */
    private RecvWqe recv;
    private boolean haveRecv;
    private long recvOffset;
    private MemKey writeKey;
    private long writeVa;
    private long writeRemaining;
    private long writeLength;
    private boolean ucDropping;
    private final ReadAtomicResponder readAtomic;
    /** The WRITE checks every path applies (packets, bursts, messages handed over in process). */
    private final WriteChecks checks;
    /**
     * The request packets from links decode into this; the packets of a split burst into the other.
     * Made on first use: most QPs of a large table never receive.
     */
    private PacketInfo decoded;
    private PacketInfo splitInfo;

    Responder(QpEngine qp) {
        this.qp = qp;
        this.acks = new Acknowledger(qp);
        this.ud = qp.type == org.rdma4j.verbs.QpType.UD ? new UdReceiver(qp) : null; // the GRH area only where used
        this.readAtomic = new ReadAtomicResponder(qp, acks);
        this.checks = new WriteChecks(qp);
    }

    private RecvWqe recvScratch() {
        RecvWqe r = recv;
        if (r == null) {
            r = new RecvWqe(Math.max(1, qp.rq.maxSge()));
            recv = r;
        }
        return r;
    }

    void setExpectedPsn(int p) {
        ePsn = p & Psn.MASK;
        nakSent = false;
    }

    /** The PSN the next new request must carry. */
    int expectedPsn() {
        return ePsn;
    }

    /** modify(MAX_DEST_RD_ATOMIC). */
    void resizeResources(int n) {
        readAtomic.resize(n);
    }

    void reset() {
        checks.reset();
        acks.reset();
        inProgress = NONE;
        haveRecv = false;
        nakSent = false;
        ucDropping = false;
        writeKey = null;
        readAtomic.clear();
    }

    /** A partially received message's receive WQE completes with WR_FLUSH_ERR. */
    void flushInFlight() {
        if (haveRecv) {
            haveRecv = false;
            qp.pushRecvCompletion(recv.wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, 0, 0, 0, 0, false);
        }
        inProgress = NONE;
        writeKey = null;
    }

    /** A request packet from a link or the in-process fabric's packet path. */
    void receive(Packet p, int op) {
        PacketInfo in = decoded;
        if (in == null) {
            in = new PacketInfo();
            decoded = in;
        }
        receive(in.decode(p, op));
    }

    /**
     * Takes one request in, whichever path brought it: rxe's responder states in order, one chain
     * for packets decoded from a link and for WRITEs and SENDs handed over on the in-process path.
     * A burst ({@code in.count > 1}) is taken in one step when each of its packets would pass, and
     * else as those packets one by one ({@link BurstSplit}).
     */
    void receive(PacketInfo in) {
        // The usual request (in order, a length that fits) takes the short way through this method;
        // every other case is a method of its own, which keeps this one small enough for the JIT to
        // compile into its caller (an in-process hand-over, a link's delivery).
        if (in.count > 1) {
            if (!burst(in)) {
                if (splitInfo == null) {
                    splitInfo = new PacketInfo();
                }
                BurstSplit.split(qp, this, in, splitInfo);
            }
            return;
        }
        int h = header(in);
        if (h != HEADER_OK) {
            if (h != HEADER_QUIET) {
                qp.hca.counters.inc(h == HEADER_BAD_PKEY ? Counter.BAD_PKEY : Counter.MALFORMED);
            }
            return;
        }
        int len = in.payloadLength;
        if ((len > qp.mtuBytes || (len != 0 && (in.kind & PacketInfo.PAYLOAD) == 0)) && lengthRefused(in)) {
            return;
        }
        if (qp.transport == Opcode.TRANSPORT_UD) {
            ud.receive(in.packet, in.opcode);
            return;
        }
        boolean rc = qp.transport == Opcode.TRANSPORT_RC;
        if ((in.psn != ePsn || ucDropping) && !sequence(in, rc)) {
            return;
        }
        execute(in, in.psn, rc);
    }

    /**
     * rxe's check_length of a packet too long for the path MTU, or with a payload its opcode has
     * none for: true when refused (counted, or NAKed on RC in sequence). An in-sequence RC SEND too
     * long for the MTU goes on: as in rxe, where the length check follows check_resource, it takes
     * its receive (RNR NAK when there is none) and completes it with REM_INV_REQ_ERR (send: sizeOk)
     * rather than leaving it to be flushed.
     */
    private boolean lengthRefused(PacketInfo in) {
        int op = in.opcode;
        boolean inSequenceRc = qp.transport == Opcode.TRANSPORT_RC && in.psn == ePsn;
        if ((in.payloadLength > qp.mtuBytes && !(inSequenceRc && Opcode.isSend(op)))
                || (!Opcode.hasPayload(op) && in.payloadLength != 0)) {
            if (inSequenceRc) {
                nakError(Aeth.NAK_INVALID_REQUEST, ePsn);
            } else {
                qp.hca.counters.inc(Counter.MALFORMED);
            }
            return true;
        }
        return false;
    }

    /**
     * rxe's check_psn for a request not at the expected PSN (or a UC QP dropping the rest of a
     * message): a gap NAKed once on RC, a duplicate answered without executing it again, UC starting
     * over at a FIRST or ONLY packet. True when the request is to be executed.
     */
    private boolean sequence(PacketInfo in, boolean rc) {
        int op = in.opcode;
        int psn = in.psn;
        int d = Psn.diff(psn, ePsn);
        if (d > 0 || (d < -UC_RECENT_PSNS && !rc)) {
            qp.hca.counters.inc(d > 0 ? Counter.OUT_OF_SEQ_REQUEST : Counter.DUPLICATE_REQUEST);
            if (rc) {
                if (!nakSent) {
                    nakSent = true;
                    qp.hca.counters.inc(Counter.SENT_SEQ_ERR);
                    sendAck(Aeth.NAK_PSN_SEQ_ERR, ePsn);
                }
                return false;
            }
            // UC: a PSN ahead means packets were lost; one far behind that the sender started over (a
            // reset QP, say: rxe treats any PSN behind so). Either way the message in progress is gone;
            // a FIRST or ONLY packet starts a new one, anything else is dropped up to it.
            inProgress = NONE;
            writeKey = null;
            recvOffset = 0;
            ePsn = psn;
            ucDropping = !Opcode.isStart(op);
            if (ucDropping) {
                ePsn = Psn.add(psn, 1);
                return false;
            }
        } else if (d < 0) {
            // RC: a retransmission; UC: a packet the network duplicated or delayed, dropped
            qp.hca.counters.inc(Counter.DUPLICATE_REQUEST);
            if (rc) {
                duplicate(in);
            }
            return false;
        }
        if (ucDropping) {
            if (!Opcode.isStart(op)) {
                ePsn = Psn.add(psn, 1);
                return false;
            }
            ucDropping = false;
        }
        return true;
    }

    private static final int HEADER_OK = 0;
    /** Not a state that takes requests: dropped without a count. */
    private static final int HEADER_QUIET = 1;
    private static final int HEADER_MALFORMED = 2;
    private static final int HEADER_BAD_PKEY = 3;

    /** rxe's check_header: the QP in a state that receives, the QP's transport, BTH version 0, the QP's P_Key. */
    private int header(PacketInfo in) {
        QpState s = qp.state;
        if (s == QpState.RESET || s == QpState.INIT || s == QpState.ERR) {
            return HEADER_QUIET;
        }
        if (in.transport != qp.transport || in.tver != 0) {
            return HEADER_MALFORMED;
        }
        return (in.pkey & 0x7FFF) != (qp.pkey & 0x7FFF) ? HEADER_BAD_PKEY : HEADER_OK;
    }

    /**
     * A burst of WRITE packets (in-process fabric, see {@link Packet#burstPackets}), taken in one step
     * when every packet of it would pass the checks of {@link #receive(PacketInfo)}: the header, the
     * first PSN the expected one, the right place in a WRITE, each packet's length as the MTU
     * demands, the WRITE's checks ({@link WriteChecks}) for the whole of it. Then one copy, one ACK (if
     * the burst asks for one) and the expected PSN moves past the burst. Returns false with nothing
     * changed otherwise: the caller then takes the burst in packet by packet ({@link BurstSplit}), so every
     * unusual case (a duplicate, a gap, a bad key, a NAK) behaves exactly as for the packets themselves.
     */
    private boolean burst(PacketInfo in) {
        int op = in.opcode;
        int k = in.count;
        int lastOp = in.lastOpcode;
        if (qp.transport != Opcode.TRANSPORT_RC || !Opcode.isWrite(op) || Opcode.isEnd(op)
                || Opcode.transport(lastOp) != Opcode.TRANSPORT_RC || !Opcode.isWrite(lastOp)
                || Opcode.isStart(lastOp) || Opcode.hasImmDt(lastOp) || in.burstMtu != qp.mtuBytes
                || header(in) != HEADER_OK) {
            return false;
        }
        int psn = in.psn;
        boolean start = Opcode.isStart(op);
        if (psn != ePsn || inProgress != (start ? NONE : WRITE)) {
            return false;
        }
        int len = in.payloadLength;
        MemKey key;
        long va;
        long remaining;
        long length = writeLength;
        if (start) {
            va = in.va;
            length = in.dmaLength;
            if (checks.writeStart(va, length, in.rkey) != WriteChecks.OK) {
                return false;
            }
            key = checks.key();
            remaining = length;
        } else {
            key = writeKey;
            va = writeVa;
            remaining = writeRemaining;
        }
        boolean end = Opcode.isEnd(lastOp);
        if (key == null || !checks.lengthOk(PacketInfo.kindOf(lastOp), len - (k - 1) * qp.mtuBytes, len, remaining)) {
            return false;
        }
        try {
            in.copyPayload(0, key.segment, key.offsetOf(va), len);
        } catch (IllegalStateException e) {
            return false; // memory went away: the packets say how (split)
        }
        writeKey = end ? null : key;
        writeVa = va + len;
        writeRemaining = remaining - len;
        writeLength = length;
        inProgress = end ? NONE : WRITE;
        if (end) {
            acks.messageDone();
        }
        ePsn = Psn.add(psn, k);
        nakSent = false;
        if (in.ackReq) {
            sendAck(ACK_SYNDROME, Psn.add(psn, k - 1));
        } else if (end) {
            acks.owe(Psn.add(psn, k - 1));
        }
        return true;
    }

    private void execute(PacketInfo in, int psn, boolean rc) {
        int op = in.opcode;
        int k = in.kind;
        if ((k & (PacketInfo.SEND | PacketInfo.WRITE)) != 0) {
            int kind = (k & PacketInfo.SEND) != 0 ? SEND : WRITE;
            boolean start = (k & PacketInfo.START) != 0;
            if (start ? inProgress != NONE : inProgress != kind) {
                dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
                return;
            }
            if (kind == SEND) {
                send(in, psn, rc, start);
            } else {
                write(in, psn, rc, start);
            }
        } else if (inProgress != NONE) {
            dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
        } else if (Opcode.isRead(op) || Opcode.isAtomic(op)) {
            int nak = Opcode.isRead(op) ? readAtomic.read(in.packet, op, psn) : readAtomic.atomic(in.packet, op, psn);
            if (nak != ReadAtomicResponder.DONE) {
                nakError(nak, psn);
                return;
            }
            ePsn = Psn.add(psn, readAtomic.spannedPsns());
            nakSent = false;
        } else {
            dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
        }
    }

    private void send(PacketInfo in, int psn, boolean rc, boolean start) {
        int op = in.opcode;
        if (start && !haveRecv) {
            if (!qp.rq.take(recvScratch())) {
                noReceive(op, psn, rc);
                return;
            }
            haveRecv = true;
            recvOffset = 0;
        } else if (start) {
            recvOffset = 0;
        }
        int len = in.payloadLength;
        if (!checks.sizeOk(in.kind, len)) {
            dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
            return;
        }
        int st = in.scatterInto(qp, recv, recvOffset);
        if (st == Scatter.SOURCE_GONE) {
            qp.hca.counters.inc(Counter.FREED_MEMORY); // the sender's memory went away: as if lost
            in.sourceGone = true;
            return;
        }
        if (st != Scatter.OK) {
            receiveFailed(st == Scatter.LENGTH ? WcStatus.LOC_LEN_ERR : WcStatus.LOC_QP_OP_ERR,
                    st == Scatter.LENGTH ? Aeth.NAK_INVALID_REQUEST : Aeth.NAK_REMOTE_OP,
                    psn, rc);
            return;
        }
        recvOffset += len;
        boolean end = Opcode.isEnd(op);
        inProgress = end ? NONE : SEND;
        if (end) {
            int flags = 0;
            int imm = 0;
            int inv = 0;
            if (Opcode.hasImmDt(op)) {
                flags |= WcFlag.WITH_IMM;
                imm = in.imm;
            }
            if (Opcode.hasIeth(op)) {
                inv = in.invalidateRkey;
                MemKey k = qp.hca.keys.lookup(inv);
                // Only a type-2 window can be invalidated (rxe_invalidate_mw refuses type 1; an MR from
                // reg_mr is not a fast-registration MR, rxe_invalidate_mr refuses it): the MR stays valid.
                if (MemKey.check(k, MemKey.Use.INVALIDATE, qp.pd, 0, 0, 0, null) != KeyVerdict.OK) {
                    receiveFailed(WcStatus.REM_INV_REQ_ERR, Aeth.NAK_INVALID_REQUEST, psn, rc);
                    return;
                }
                k.invalidate();
                flags |= WcFlag.WITH_INV;
            }
            haveRecv = false;
            acks.messageDone();
            qp.hca.counters.inc(Counter.RDMA_RECVS);
            qp.pushRecvCompletion(recv.wrId, WcStatus.SUCCESS, WcOpcode.RECV, (int) recvOffset, flags, imm, inv, 0,
                    in.solicited);
        }
        advance(in, psn, rc);
    }

    private void write(PacketInfo in, int psn, boolean rc, boolean start) {
        int op = in.opcode;
        if (start) {
            int nak = checks.writeStart(in.va, in.dmaLength, in.rkey);
            if (nak != WriteChecks.OK) {
                dropOrNak(rc, op, nak, psn);
                return;
            }
            writeKey = checks.key();
            writeVa = in.va;
            writeRemaining = in.dmaLength;
            writeLength = in.dmaLength;
        }
        int len = in.payloadLength;
        int kind = in.kind;
        boolean end = (kind & PacketInfo.END) != 0;
        if (!checks.lengthOk(kind, len, len, writeRemaining)) {
            dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
            return;
        }
        if (end && !haveRecv && (kind & PacketInfo.IMM) != 0 && !takeRecvForImmediate(op, psn, rc, start)) {
            return;
        }
        if (len > 0) {
            try {
                in.copyPayload(0, writeKey.segment, writeKey.offsetOf(writeVa), len);
            } catch (IllegalStateException | IndexOutOfBoundsException e) {
                copyFailed(in, psn, rc);
                return;
            }
        }
        writeVa += len;
        writeRemaining -= len;
        inProgress = end ? NONE : WRITE;
        if (end) {
            writeKey = null;
            acks.messageDone();
            if ((kind & PacketInfo.IMM) != 0) {
                haveRecv = false;
                qp.pushRecvCompletion(recv.wrId, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, (int) writeLength,
                        WcFlag.WITH_IMM, in.imm, 0, 0, in.solicited);
            }
        }
        advance(in, psn, rc);
    }

    /**
     * The last packet of a WRITE with immediate takes a receive WQE; false when there is none (an RNR
     * NAK on RC, the message dropped on UC).
     */
    private boolean takeRecvForImmediate(int op, int psn, boolean rc, boolean start) {
        if (qp.rq.take(recvScratch())) {
            haveRecv = true;
            return true;
        }
        noReceive(op, psn, rc);
        if (start) {
            inProgress = NONE; // an ONLY packet is retried whole, with its RETH
        }
        return false;
    }

    /** No receive WQE for a message that needs one: an RNR NAK on RC, the message dropped on UC. */
    private void noReceive(int op, int psn, boolean rc) {
        if (rc) {
            qp.hca.counters.inc(Counter.SEND_RNR_ERR);
            sendAck(Aeth.rnrNak(qp.minRnrTimerCode), psn);
        } else {
            qp.hca.counters.inc(Counter.NO_RECV_DROPS);
            dropUcMessage(op, psn);
        }
    }

    /** A WRITE's copy failed: the target freed under its registration, or the sender's memory gone. */
    private void copyFailed(PacketInfo in, int psn, boolean rc) {
        if (!writeKey.alive()) {
            // The target was freed (its arena closed) under the registration: no memory, no access.
            dropOrNak(rc, in.opcode, Aeth.NAK_REMOTE_ACCESS, psn);
        } else {
            qp.hca.counters.inc(Counter.FREED_MEMORY); // the sender's memory went away: as if lost
            in.sourceGone = true;
        }
    }

    private void duplicate(PacketInfo in) {
        int op = in.opcode;
        int psn = in.psn;
        if (Opcode.isSend(op) || Opcode.isWrite(op)) {
            if (in.ackReq) {
                sendAck(ACK_SYNDROME, Psn.add(ePsn, -1));
            }
            return;
        }
        int nak = readAtomic.duplicate(in.packet, op, psn);
        if (nak != ReadAtomicResponder.DONE) {
            nakError(nak, psn);
        }
    }

    // ------------------------------------------------------------------ helpers

    /**
     * The receive WQE cannot take the message: it completes with {@code status} and, on RC, the
     * requester gets NAK {@code nak}: "invalid request" when the WQE is too short (IBTA's length error,
     * as rxe NAKs it) or cannot invalidate what the SEND names, "remote operational error" when the WQE
     * itself is bad (malformed: a bad lkey).
     */
    private void receiveFailed(WcStatus status, int nak, int psn, boolean rc) {
        haveRecv = false;
        qp.pushRecvCompletion(recv.wrId, status, WcOpcode.RECV, 0, 0, 0, 0, 0, false);
        if (rc) {
            sendAck(nak, psn);
        }
        qp.enterError();
    }

    private void dropOrNak(boolean rc, int op, int nak, int psn) {
        if (rc) {
            nakError(nak, psn);
        } else {
            dropUcMessage(op, psn);
        }
    }

    /** UC: the rest of this message is dropped (no NAKs on UC). */
    private void dropUcMessage(int op, int psn) {
        inProgress = NONE;
        writeKey = null;
        ucDropping = !Opcode.isEnd(op);
        ePsn = Psn.add(psn, 1);
    }

    /** A class C/D error: NAK it and move the responder QP to ERR. */
    private void nakError(int nak, int psn) {
        sendAck(nak, psn);
        if (haveRecv) {
            // the receive holding the message in progress completes with the error, not a flush (rxe)
            haveRecv = false;
            WcStatus st = nak == Aeth.NAK_REMOTE_ACCESS ? WcStatus.REM_ACCESS_ERR
                    : nak == Aeth.NAK_REMOTE_OP ? WcStatus.REM_OP_ERR : WcStatus.REM_INV_REQ_ERR;
            qp.pushRecvCompletion(recv.wrId, st, WcOpcode.RECV, 0, 0, 0, 0, 0, false);
        }
        qp.enterError();
    }

    private void advance(PacketInfo in, int psn, boolean rc) {
        ePsn = Psn.add(psn, 1);
        nakSent = false;
        if (rc) {
            if (in.ackReq) {
                sendAck(ACK_SYNDROME, psn);
            } else if ((in.kind & PacketInfo.END) != 0) {
                acks.owe(psn); // a requester coalescing ACKs: acknowledged soon anyway
            }
        }
    }

    /** When an owed ACK is due (see {@link Acknowledger#owe}), or Long.MAX_VALUE. */
    long owedAckDeadlineNs() {
        return acks.owedDeadlineNs();
    }

    /** Sends the owed ACK if it is due (the progress agent's run of the task). */
    void sendOwedAck() {
        acks.sendOwed();
    }

    /** A positive ACK is coalesced until {@link #flushAck()}; a NAK goes at once. */
    private void sendAck(int syndrome, int psn) {
        if (syndrome == ACK_SYNDROME) {
            acks.ack(psn);
        } else {
            acks.nak(syndrome, psn);
        }
    }

    /** Sends the coalesced ACK, if one is pending (end of the task's pass over its inbound packets). */
    void flushAck() {
        acks.flush();
    }
}
