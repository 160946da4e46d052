// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.link.Packet;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Ieth;
import org.rdma4j.soft.wire.ImmDt;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.soft.wire.Reth;
import org.rdma4j.verbs.Access;
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

    void receive(Packet p, int op) {
        if (p.burstPackets > 1) {
            if (!burst(p, op)) {
                split(p, op);
            }
            return;
        }
        QpState s = qp.state;
        if (s == QpState.RESET || s == QpState.INIT || s == QpState.ERR) {
            return;
        }
        MemorySegment b = p.buffer;
        if (Opcode.transport(op) != qp.transport || Bth.tverOf(b) != 0) {
            qp.hca.counters.inc(Counter.MALFORMED);
            return;
        }
        if ((Bth.pkeyOf(b) & 0x7FFF) != (qp.pkey & 0x7FFF)) {
            qp.hca.counters.inc(Counter.BAD_PKEY);
            return;
        }
        boolean inSequenceRc = qp.transport == Opcode.TRANSPORT_RC && Bth.psnOf(b) == ePsn;
        if ((p.payloadLength > qp.mtuBytes && !(inSequenceRc && Opcode.isSend(op)))
                || (!Opcode.hasPayload(op) && p.payloadLength != 0)) {
            // an in-sequence RC SEND too long for the MTU goes on: as in rxe, where the length check
            // follows check_resource, it takes its receive (RNR NAK when there is none) and completes it
            // with REM_INV_REQ_ERR (send: sizeOk) rather than leaving it to be flushed
            if (inSequenceRc) {
                nakError(Aeth.NAK_INVALID_REQUEST, ePsn);
            } else {
                qp.hca.counters.inc(Counter.MALFORMED);
            }
            return;
        }
        if (qp.transport == Opcode.TRANSPORT_UD) {
            ud.receive(p, op);
            return;
        }
        boolean rc = qp.transport == Opcode.TRANSPORT_RC;
        int psn = Bth.psnOf(b);
        int d = Psn.diff(psn, ePsn);
        if (d > 0 || (d < -UC_RECENT_PSNS && !rc)) {
            qp.hca.counters.inc(d > 0 ? Counter.OUT_OF_SEQ_REQUEST : Counter.DUPLICATE_REQUEST);
            if (rc) {
                if (!nakSent) {
                    nakSent = true;
                    qp.hca.counters.inc(Counter.SENT_SEQ_ERR);
                    sendAck(Aeth.NAK_PSN_SEQ_ERR, ePsn);
                }
                return;
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
                return;
            }
        } else if (d < 0) {
            // RC: a retransmission; UC: a packet the network duplicated or delayed, dropped
            qp.hca.counters.inc(Counter.DUPLICATE_REQUEST);
            if (rc) {
                duplicate(p, op, psn);
            }
            return;
        }
        if (ucDropping) {
            if (!Opcode.isStart(op)) {
                ePsn = Psn.add(psn, 1);
                return;
            }
            ucDropping = false;
        }
        execute(p, op, psn, rc);
    }

    /**
     * A burst of WRITE packets (in-process fabric, see {@link Packet#burstPackets}), taken in one step
     * when every packet of it would pass the per-packet checks: the QP's state, transport and P_Key,
     * the first PSN the expected one, the right place in a WRITE, each packet's length as the MTU
     * demands, the rkey good for the whole WRITE. Then one copy, one ACK (if the burst asks for one)
     * and the expected PSN moves past the burst. Returns false with nothing changed otherwise: the
     * caller then takes the burst in packet by packet ({@link #split}), so every unusual case (a
     * duplicate, a gap, a bad key, a NAK) behaves exactly as for the packets themselves.
     */
    private boolean burst(Packet p, int op) {
        MemorySegment b = p.buffer;
        int k = p.burstPackets;
        int lastOp = p.burstLastOpcode;
        if (Opcode.transport(op) != Opcode.TRANSPORT_RC || !Opcode.isWrite(op) || Opcode.isEnd(op)
                || Opcode.transport(lastOp) != Opcode.TRANSPORT_RC || !Opcode.isWrite(lastOp)
                || Opcode.isStart(lastOp) || Opcode.hasImmDt(lastOp) || p.burstMtu != qp.mtuBytes
                || Bth.tverOf(b) != 0) {
            return false;
        }
        int psn = Bth.psnOf(b);
        boolean start = Opcode.isStart(op);
        if (!takesInOrder(psn, Bth.pkeyOf(b), start ? NONE : WRITE)) {
            return false;
        }
        int len = p.payloadLength;
        MemKey key;
        long va;
        long remaining;
        long length = writeLength;
        if (start) {
            long rethAt = Opcode.offsetOf(op, Opcode.HEADER_RETH);
            va = Reth.virtualAddressAt(b, rethAt);
            length = Integer.toUnsignedLong(Reth.dmaLengthAt(b, rethAt));
            if (checks.writeStart(va, length, Reth.rkeyAt(b, rethAt)) != WriteChecks.OK) {
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
        if (key == null || !checks.lengthOk(lastOp, len - (k - 1) * qp.mtuBytes, len, remaining)) {
            return false;
        }
        try {
            p.copyPayload(0, key.segment, key.offsetOf(va), len);
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
        if (Bth.ackReqOf(b)) {
            sendAck(ACK_SYNDROME, Psn.add(psn, k - 1));
        } else if (end) {
            acks.owe(Psn.add(psn, k - 1));
        }
        return true;
    }

    /**
     * An RDMA WRITE ONLY handed over without a packet ({@link QpTask#takeDirectWrite}), taken in
     * when its packet would pass every check unchanged: the QP's state, transport and P_Key, the PSN
     * the expected one, no message in progress, the length within the MTU, remote write allowed and
     * the rkey good for the range; then the copy, and the ACK (or the owed ACK) as {@link #advance}
     * gives it. Returns false with nothing changed otherwise: the requester then sends the packet.
     */
    boolean takeWrite(int psn, int pkey, boolean ackReq, long va, int rkey, MemorySegment src, long srcOffset,
                      int len) {
        if (len <= 0 || !checks.onlyLengthOk(len) || !takesInOrder(psn, pkey, NONE) || !checks.remoteWriteAllowed()) {
            return false;
        }
        MemKey key = checks.remoteKey(rkey, va, len, Access.REMOTE_WRITE);
        if (key == null) {
            return false;
        }
        try {
            Packet.copyBytes(src, srcOffset, key.segment, key.offsetOf(va), len);
        } catch (IllegalStateException | IndexOutOfBoundsException e) {
            return false; // memory went away: the packet says how
        }
        writeKey = null;
        writeVa = va + len;
        writeRemaining = 0;
        writeLength = len;
        acks.messageDone();
        tookDirect(psn, ackReq);
        return true;
    }

    /**
     * A SEND ONLY (with immediate or not) from the connected QP's requester on an in-process fabric,
     * without a packet (see {@code Requester.sendDirect}), taken in only when its packet would be: the
     * QP's state, transport and P_Key, the PSN the expected one, no message in progress, the length
     * within the MTU, a receive WQE to take. The bytes are scattered into that WQE straight from
     * {@code src}, then the receive completes and the ACK (or the owed ACK) goes as for the packet. A
     * scatter that fails on the receive side (too short, a bad lkey) ends as the packet's would: the
     * receive completes in error, a NAK, the QP in ERR; true then too, the NAK tells the requester.
     * False with nothing changed but a receive WQE held for the message (as after an RNR-free start)
     * when nothing applies or the sender's memory went away during the copy: the requester then sends
     * the packet, which finds the same WQE.
     */
    boolean takeSend(int psn, int pkey, boolean ackReq, boolean solicited, boolean withImm, int imm,
                     MemorySegment src, long srcOffset, int len) {
        if (len < 0 || !checks.onlyLengthOk(len) || !takesInOrder(psn, pkey, NONE)) {
            return false;
        }
        if (!haveRecv) {
            if (!qp.rq.take(recvScratch())) {
                return false; // the packet meets the RNR NAK
            }
            haveRecv = true;
        }
        recvOffset = 0;
        int st = Scatter.intoRecv(qp, recv, 0, null, src, srcOffset, len);
        if (st == Scatter.SOURCE_GONE) {
            return false;
        }
        if (st != Scatter.OK) {
            receiveFailed(st == Scatter.LENGTH ? WcStatus.LOC_LEN_ERR : WcStatus.LOC_QP_OP_ERR,
                    st == Scatter.LENGTH ? Aeth.NAK_INVALID_REQUEST : Aeth.NAK_REMOTE_OP, psn, true);
            return true;
        }
        haveRecv = false;
        acks.messageDone();
        qp.hca.counters.inc(Counter.RDMA_RECVS);
        qp.pushRecvCompletion(recv.wrId, WcStatus.SUCCESS, WcOpcode.RECV, len, withImm ? WcFlag.WITH_IMM : 0,
                withImm ? imm : 0, 0, 0, solicited);
        tookDirect(psn, ackReq);
        return true;
    }

    /** After a message taken without a packet: the next PSN, and the ACK it asks for or an owed one. */
    private void tookDirect(int psn, boolean ackReq) {
        ePsn = Psn.add(psn, 1);
        nakSent = false;
        if (ackReq) {
            sendAck(ACK_SYNDROME, psn);
        } else {
            acks.owe(psn);
        }
    }

    /**
     * Takes a burst in as the packets it stands for, one after the other: the same headers the
     * requester would have written for each (PSN, opcode, RETH on the first of a message, SE and
     * AckReq on the last) and the matching slice of the payload.
     */
    private void split(Packet p, int op) {
        MemorySegment b = p.buffer;
        if (!Opcode.isWrite(op)) {
            qp.hca.counters.inc(Counter.MALFORMED); // only WRITEs travel in bursts
            return;
        }
        int k = p.burstPackets;
        int mtu = p.burstMtu;
        int psn = Bth.psnOf(b);
        boolean se = Bth.solicitedEventOf(b);
        boolean ackReq = Bth.ackReqOf(b);
        int pkey = Bth.pkeyOf(b);
        int destQpn = Bth.destQpnOf(b);
        int middle = Opcode.writeOpcode(Opcode.transport(op), Opcode.MIDDLE, false);
        int at = 0;
        for (int i = 0; i < k; i++) {
            boolean lastOne = i == k - 1;
            int subOp = i == 0 ? op : lastOne ? p.burstLastOpcode : middle;
            int len = lastOne ? p.payloadLength - at : Math.min(mtu, p.payloadLength - at);
            Packet sub = qp.hca.packets.acquire();
            try {
                Bth.writeAt(sub.buffer, 0, subOp, se && lastOne, Bth.padCountFor(len), pkey, destQpn,
                        ackReq && lastOne, Psn.add(psn, i));
                if (Opcode.hasReth(subOp) && Opcode.hasReth(op)) {
                    MemorySegment.copy(b, Opcode.offsetOf(op, Opcode.HEADER_RETH), sub.buffer,
                            Opcode.offsetOf(subOp, Opcode.HEADER_RETH), Reth.LENGTH);
                }
                sub.headerLength = Opcode.headerLength(subOp);
                sub.addPayloadOf(p, at, len);
                sub.srcGid = p.srcGid;
                sub.dstGid = p.dstGid;
                receive(sub, subOp);
            } finally {
                sub.release();
            }
            at += len;
        }
    }

    private void execute(Packet p, int op, int psn, boolean rc) {
        if (Opcode.isSend(op) || Opcode.isWrite(op)) {
            int kind = Opcode.isSend(op) ? SEND : WRITE;
            boolean start = Opcode.isStart(op);
            if (start ? inProgress != NONE : inProgress != kind) {
                dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
                return;
            }
            if (kind == SEND) {
                send(p, op, psn, rc, start);
            } else {
                write(p, op, psn, rc, start);
            }
        } else if (inProgress != NONE) {
            dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
        } else if (Opcode.isRead(op) || Opcode.isAtomic(op)) {
            int nak = Opcode.isRead(op) ? readAtomic.read(p, op, psn) : readAtomic.atomic(p, op, psn);
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

    private void send(Packet p, int op, int psn, boolean rc, boolean start) {
        if (start && !haveRecv) {
            if (!qp.rq.take(recvScratch())) {
                if (rc) {
                    qp.hca.counters.inc(Counter.SEND_RNR_ERR);
                    sendAck(Aeth.rnrNak(qp.minRnrTimerCode), psn);
                } else {
                    qp.hca.counters.inc(Counter.NO_RECV_DROPS);
                    dropUcMessage(op, psn);
                }
                return;
            }
            haveRecv = true;
            recvOffset = 0;
        } else if (start) {
            recvOffset = 0;
        }
        int len = p.payloadLength;
        if (!checks.sizeOk(op, len)) {
            dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
            return;
        }
        int st = scatterRecv(recvOffset, p, null, len);
        if (st == Scatter.SOURCE_GONE) {
            qp.hca.counters.inc(Counter.FREED_MEMORY); // the sender's memory went away: as if lost
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
                imm = ImmDt.immediateAt(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_IMM_DT));
            }
            if (Opcode.hasIeth(op)) {
                inv = Ieth.rkeyAt(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_IETH));
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
                    Bth.solicitedEventOf(p.buffer));
        }
        advance(p, psn, rc);
    }

    private void write(Packet p, int op, int psn, boolean rc, boolean start) {
        if (start) {
            long rethAt = Opcode.offsetOf(op, Opcode.HEADER_RETH);
            long va = Reth.virtualAddressAt(p.buffer, rethAt);
            long length = Integer.toUnsignedLong(Reth.dmaLengthAt(p.buffer, rethAt));
            int nak = checks.writeStart(va, length, Reth.rkeyAt(p.buffer, rethAt));
            if (nak != WriteChecks.OK) {
                dropOrNak(rc, op, nak, psn);
                return;
            }
            writeKey = checks.key();
            writeVa = va;
            writeRemaining = length;
            writeLength = length;
        }
        int len = p.payloadLength;
        boolean end = Opcode.isEnd(op);
        if (!checks.lengthOk(op, len, len, writeRemaining)) {
            dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
            return;
        }
        if (end && Opcode.hasImmDt(op) && !haveRecv) {
            if (!qp.rq.take(recvScratch())) {
                if (rc) {
                    qp.hca.counters.inc(Counter.SEND_RNR_ERR);
                    sendAck(Aeth.rnrNak(qp.minRnrTimerCode), psn);
                } else {
                    qp.hca.counters.inc(Counter.NO_RECV_DROPS);
                    dropUcMessage(op, psn);
                }
                if (start) {
                    inProgress = NONE; // an ONLY packet is retried whole, with its RETH
                }
                return;
            }
            haveRecv = true;
        }
        if (len > 0) {
            try {
                p.copyPayload(0, writeKey.segment, writeKey.offsetOf(writeVa), len);
            } catch (IllegalStateException e) {
                if (!writeKey.alive()) {
                    // The target was freed (its arena closed) under the registration: no memory, no access.
                    dropOrNak(rc, op, Aeth.NAK_REMOTE_ACCESS, psn);
                } else {
                    qp.hca.counters.inc(Counter.FREED_MEMORY); // the sender's memory went away: as if lost
                }
                return;
            }
        }
        writeVa += len;
        writeRemaining -= len;
        inProgress = end ? NONE : WRITE;
        if (end) {
            writeKey = null;
            acks.messageDone();
            if (Opcode.hasImmDt(op)) {
                int imm = ImmDt.immediateAt(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_IMM_DT));
                haveRecv = false;
                qp.pushRecvCompletion(recv.wrId, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, (int) writeLength,
                        WcFlag.WITH_IMM, imm, 0, 0, Bth.solicitedEventOf(p.buffer));
            }
        }
        advance(p, psn, rc);
    }

    private void duplicate(Packet p, int op, int psn) {
        if (Opcode.isSend(op) || Opcode.isWrite(op)) {
            if (Bth.ackReqOf(p.buffer)) {
                sendAck(ACK_SYNDROME, Psn.add(ePsn, -1));
            }
            return;
        }
        int nak = readAtomic.duplicate(p, op, psn);
        if (nak != ReadAtomicResponder.DONE) {
            nakError(nak, psn);
        }
    }

    // ------------------------------------------------------------------ helpers

    /**
     * Whether a request taken without the packet path (a burst, a message handed over in process)
     * is one the packet path would take straight to execution: the QP in a state that receives, RC,
     * the P_Key the QP's, the PSN the expected one, and the message in progress ({@code inProgress})
     * the one the request continues. The packet path's own header and PSN checks in {@link #receive}
     * say the same for a packet; a request that fails here goes that way and meets them.
     */
    private boolean takesInOrder(int psn, int pkey, int continuing) {
        QpState s = qp.state;
        return s != QpState.RESET && s != QpState.INIT && s != QpState.ERR && qp.transport == Opcode.TRANSPORT_RC
                && (pkey & 0x7FFF) == (qp.pkey & 0x7FFF) && psn == ePsn && inProgress == continuing;
    }

    /** Writes into the current receive WQE at {@code offset}: from the packet payload or from {@code src}. */
    private int scatterRecv(long offset, Packet p, MemorySegment src, int len) {
        return Scatter.intoRecv(qp, recv, offset, p, src, len);
    }

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

    private void advance(Packet p, int psn, boolean rc) {
        ePsn = Psn.add(psn, 1);
        nakSent = false;
        if (rc) {
            if (Bth.ackReqOf(p.buffer)) {
                sendAck(ACK_SYNDROME, psn);
            } else if (Opcode.isEnd(Bth.opcodeOf(p.buffer))) {
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
