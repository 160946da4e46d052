package org.rdma4j.soft.engine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.soft.link.Packet;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.AtomicAckEth;
import org.rdma4j.soft.wire.AtomicEth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Deth;
import org.rdma4j.soft.wire.Ieth;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.ImmDt;
import org.rdma4j.soft.wire.Ipv4Header;
import org.rdma4j.soft.wire.Ipv6Header;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.soft.wire.Reth;
import org.rdma4j.soft.wire.UdpHeader;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.NetworkHeaderType;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.WcFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * The responder: executes incoming requests. It checks PSN order (NAKing a gap once, answering
 * duplicates without executing them twice: SEND/WRITE re-ACKed, READ replayed from memory, atomics
 * answered with the saved original value), opcode sequence, the QP's access flags, rkeys (PD, access,
 * range, type-2 window QP), consumes receive WQEs (RNR NAK when there is none), and acknowledges.
 * Runs only inside the QP task.
 */
final class Responder {
    private static final int ACK_SYNDROME = 0x1F;
    private static final int NONE = 0;
    private static final int SEND = 1;
    private static final int WRITE = 2;
    private static final int SCATTER_OK = 0;
    private static final int SCATTER_LENGTH = 1;
    private static final int SCATTER_PROTECTION = 2;
    private static final int SCATTER_SOURCE_GONE = 3;
    /**
     * UC: a PSN at most this far behind the expected one is a late duplicate from the network and is
     * dropped; further behind, the sender has started over and a FIRST/ONLY packet begins a new message.
     */
    static final int UC_RECENT_PSNS = 1024;
    /** The longest RDMA READ or WRITE a RETH may ask for (2^31 bytes, as rxe checks it). */
    private static final long MAX_DMA_LENGTH = 1L << 31;
    /** Bytes of GRH in front of a UD receive. */
    static final int GRH_BYTES = 40;

    private final QpEngine qp;
    private final Bth bth = new Bth();
    private final Bth out = new Bth();
    private final Reth reth = new Reth();
    private final ImmDt immDt = new ImmDt();
    private final Ieth ieth = new Ieth();
    private final Deth deth = new Deth();
    private final AtomicEth atomicEth = new AtomicEth();
    private final Aeth aeth = new Aeth();
    private final AtomicAckEth atomicAck = new AtomicAckEth();
    /** A positive ACK waits for the end of the task's pass over its inbound packets (see sendAck). */
    private boolean ackPending;
    private int ackPendingPsn;
    private final MemorySegment grh = Arena.ofAuto().allocate(GRH_BYTES, 8);
    private final Ipv4Header ip4 = new Ipv4Header();
    private final Ipv6Header ip6 = new Ipv6Header();

    private int ePsn;
    private int msn;
    private boolean nakSent;
    private int inProgress = NONE;
    private final RecvWqe recv;
    private boolean haveRecv;
    private long recvOffset;
    private MemKey writeKey;
    private long writeVa;
    private long writeRemaining;
    private long writeLength;
    private boolean ucDropping;
    private Resource[] resources = {new Resource()};
    private int resNext;

    Responder(QpEngine qp) {
        this.qp = qp;
        this.recv = new RecvWqe(Math.max(1, qp.rq.maxSge()));
    }

    String debugState() {
        return "ePsn=" + Integer.toHexString(ePsn) + " nakSent=" + nakSent + " inProgress=" + inProgress
                + " haveRecv=" + haveRecv;
    }

    void setExpectedPsn(int p) {
        ePsn = p & Psn.MASK;
        nakSent = false;
    }

    /** The PSN the next new request must carry. */
    int expectedPsn() {
        return ePsn;
    }

    void resizeResources(int n) {
        Resource[] r = new Resource[Math.max(1, n)];
        for (int i = 0; i < r.length; i++) {
            r[i] = new Resource();
        }
        resources = r;
        resNext = 0;
    }

    void reset() {
        ackPending = false;
        inProgress = NONE;
        haveRecv = false;
        nakSent = false;
        ucDropping = false;
        msn = 0;
        writeKey = null;
        for (Resource r : resources) {
            r.valid = false;
        }
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
        QpState s = qp.state;
        if (s == QpState.RESET || s == QpState.INIT || s == QpState.ERR) {
            return;
        }
        MemorySegment b = p.buffer;
        bth.wrap(b, 0);
        if (Opcode.transport(op) != qp.transport || bth.tver() != 0) {
            qp.hca.counters.inc(Counter.MALFORMED);
            return;
        }
        if ((bth.pkey() & 0x7FFF) != (qp.pkey & 0x7FFF)) {
            qp.hca.counters.inc(Counter.BAD_PKEY);
            return;
        }
        boolean inSequenceRc = qp.transport == Opcode.TRANSPORT_RC && bth.psn() == ePsn;
        if ((p.payloadLength > qp.mtu && !(inSequenceRc && Opcode.isSend(op)))
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
            ud(p, op);
            return;
        }
        boolean rc = qp.transport == Opcode.TRANSPORT_RC;
        int psn = bth.psn();
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
        } else if (Opcode.isRead(op)) {
            read(p, op, psn);
        } else if (Opcode.isAtomic(op)) {
            atomic(p, op, psn);
        } else {
            dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
        }
    }

    private void send(Packet p, int op, int psn, boolean rc, boolean start) {
        if (start && !haveRecv) {
            if (!qp.rq.take(recv)) {
                if (rc) {
                    qp.hca.counters.inc(Counter.SEND_RNR_ERR);
                    sendAck(Aeth.rnrNak(qp.minRnrTimer), psn);
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
        if (!sizeOk(op, len)) {
            dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
            return;
        }
        int st = scatterRecv(recvOffset, p, null, len);
        if (st == SCATTER_SOURCE_GONE) {
            qp.hca.counters.inc(Counter.FREED_MEMORY); // the sender's memory went away: as if lost
            return;
        }
        if (st != SCATTER_OK) {
            receiveFailed(st == SCATTER_LENGTH ? WcStatus.LOC_LEN_ERR : WcStatus.LOC_QP_OP_ERR,
                    st == SCATTER_LENGTH ? Aeth.NAK_INVALID_REQUEST : Aeth.NAK_REMOTE_OP,
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
                imm = immDt.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_IMM_DT)).immediate();
            }
            if (Opcode.hasIeth(op)) {
                inv = ieth.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_IETH)).rkey();
                MemKey k = qp.hca.keys.lookup(inv);
                // Only a type-2 window can be invalidated (rxe_invalidate_mw refuses type 1; an MR from
                // reg_mr is not a fast-registration MR, rxe_invalidate_mr refuses it): the MR stays valid.
                if (k == null || k.pd != qp.pd || k.kind != MemKey.MW_TYPE2) {
                    receiveFailed(WcStatus.REM_INV_REQ_ERR, Aeth.NAK_INVALID_REQUEST, psn, rc);
                    return;
                }
                Invalidate.apply(k);
                flags |= WcFlag.WITH_INV;
            }
            haveRecv = false;
            msn = Psn.add(msn, 1);
            qp.hca.counters.inc(Counter.RDMA_RECVS);
            qp.pushRecvCompletion(recv.wrId, WcStatus.SUCCESS, WcOpcode.RECV, (int) recvOffset, flags, imm, inv, 0,
                    bth.solicitedEvent());
        }
        advance(psn, rc);
    }

    private void write(Packet p, int op, int psn, boolean rc, boolean start) {
        if (start) {
            if ((qp.accessFlags & Access.REMOTE_WRITE) == 0) {
                dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
                return;
            }
            reth.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_RETH));
            long va = reth.virtualAddress();
            long length = Integer.toUnsignedLong(reth.dmaLength());
            if (length > MAX_DMA_LENGTH) {
                dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
                return;
            }
            MemKey k = null;
            if (length > 0) {
                k = checkKey(reth.rkey(), va, length, Access.REMOTE_WRITE);
                if (k == null) {
                    dropOrNak(rc, op, Aeth.NAK_REMOTE_ACCESS, psn);
                    return;
                }
            }
            writeKey = k;
            writeVa = va;
            writeRemaining = length;
            writeLength = length;
        }
        int len = p.payloadLength;
        boolean end = Opcode.isEnd(op);
        if (!sizeOk(op, len) || len > writeRemaining || (end && len != writeRemaining)) {
            dropOrNak(rc, op, Aeth.NAK_INVALID_REQUEST, psn);
            return;
        }
        if (end && Opcode.hasImmDt(op) && !haveRecv) {
            if (!qp.rq.take(recv)) {
                if (rc) {
                    qp.hca.counters.inc(Counter.SEND_RNR_ERR);
                    sendAck(Aeth.rnrNak(qp.minRnrTimer), psn);
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
            msn = Psn.add(msn, 1);
            if (Opcode.hasImmDt(op)) {
                int imm = immDt.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_IMM_DT)).immediate();
                haveRecv = false;
                qp.pushRecvCompletion(recv.wrId, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, (int) writeLength,
                        WcFlag.WITH_IMM, imm, 0, 0, bth.solicitedEvent());
            }
        }
        advance(psn, rc);
    }

    private void read(Packet p, int op, int psn) {
        // no responder resources (max_dest_rd_atomic 0) is an invalid request, as rxe answers it
        if ((qp.accessFlags & Access.REMOTE_READ) == 0 || qp.maxDestRdAtomic == 0) {
            nakError(Aeth.NAK_INVALID_REQUEST, psn);
            return;
        }
        reth.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_RETH));
        long va = reth.virtualAddress();
        long length = Integer.toUnsignedLong(reth.dmaLength());
        if (length > MAX_DMA_LENGTH) {
            nakError(Aeth.NAK_INVALID_REQUEST, psn);
            return;
        }
        MemKey k = null;
        if (length > 0) {
            k = checkKey(reth.rkey(), va, length, Access.REMOTE_READ);
            if (k == null) {
                nakError(Aeth.NAK_REMOTE_ACCESS, psn);
                return;
            }
        }
        int packets = (int) Math.max(1, (length + qp.mtu - 1) / qp.mtu);
        Resource r = nextResource();
        r.atomic = false;
        r.firstPsn = psn;
        r.lastPsn = Psn.add(psn, packets - 1);
        r.rkey = reth.rkey();
        r.va = va;
        r.length = length;
        r.valid = true;
        msn = Psn.add(msn, 1);
        ePsn = Psn.add(psn, packets);
        nakSent = false;
        sendReadResponses(k, va, length, psn, true);
    }

    private void atomic(Packet p, int op, int psn) {
        if ((qp.accessFlags & Access.REMOTE_ATOMIC) == 0 || qp.maxDestRdAtomic == 0) {
            nakError(Aeth.NAK_INVALID_REQUEST, psn);
            return;
        }
        atomicEth.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_ATOMIC_ETH));
        long va = atomicEth.virtualAddress();
        // the rkey first, then the alignment (rxe's order: a bad key is an access error either way)
        MemKey k = checkKey(atomicEth.rkey(), va, 8, Access.REMOTE_ATOMIC);
        if (k == null) {
            nakError(Aeth.NAK_REMOTE_ACCESS, psn);
            return;
        }
        if ((va & 7) != 0) {
            nakError(Aeth.NAK_INVALID_REQUEST, psn);
            return;
        }
        long off = k.offsetOf(va);
        long original;
        try {
            synchronized (qp.hca.atomicLock) {
                original = k.segment.get(ValueLayout.JAVA_LONG_UNALIGNED, off);
                if (op == Opcode.RC_COMPARE_SWAP) {
                    if (original == atomicEth.compare()) {
                        k.segment.set(ValueLayout.JAVA_LONG_UNALIGNED, off, atomicEth.swapAdd());
                    }
                } else {
                    k.segment.set(ValueLayout.JAVA_LONG_UNALIGNED, off, original + atomicEth.swapAdd());
                }
            }
        } catch (IllegalStateException e) {
            nakError(Aeth.NAK_REMOTE_ACCESS, psn); // the target was freed under the registration
            return;
        }
        Resource r = nextResource();
        r.atomic = true;
        r.firstPsn = psn;
        r.lastPsn = psn;
        r.originalValue = original;
        r.valid = true;
        msn = Psn.add(msn, 1);
        ePsn = Psn.add(psn, 1);
        nakSent = false;
        sendAtomicAck(psn, original);
    }

    private void duplicate(Packet p, int op, int psn) {
        if (Opcode.isSend(op) || Opcode.isWrite(op)) {
            if (bth.ackReq()) {
                sendAck(ACK_SYNDROME, Psn.add(ePsn, -1));
            }
            return;
        }
        for (Resource r : resources) {
            if (!r.valid) {
                continue;
            }
            if (Opcode.isRead(op) && !r.atomic && Psn.compare(psn, r.firstPsn) >= 0
                    && Psn.compare(psn, r.lastPsn) <= 0) {
                // Replayed from memory (the data may have changed since: RDMA READ semantics allow it).
                reth.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_RETH));
                long va = reth.virtualAddress();
                long length = Integer.toUnsignedLong(reth.dmaLength());
                // only the original request or a part of it is a duplicate (as rxe); anything else is dropped
                if (reth.rkey() != r.rkey || Long.compareUnsigned(va, r.va) < 0 || length > r.length
                        || Long.compareUnsigned(va - r.va, r.length - length) > 0) {
                    return;
                }
                MemKey k = null;
                if (length > 0) {
                    k = checkKey(reth.rkey(), va, length, Access.REMOTE_READ);
                    if (k == null) {
                        // Gone since the first answer (deregistered, invalidated, freed): as rxe's recheck.
                        nakError(Aeth.NAK_REMOTE_ACCESS, psn);
                        return;
                    }
                }
                // a request from the middle of the original is answered from the middle: MIDDLE/LAST
                sendReadResponses(k, va, length, psn, psn == r.firstPsn);
                return;
            }
            if (Opcode.isAtomic(op) && r.atomic && r.firstPsn == psn) {
                sendAtomicAck(psn, r.originalValue);
                return;
            }
        }
        if (QpEngine.DEBUG) {
            StringBuilder sb = new StringBuilder("responder qp 0x" + Integer.toHexString(qp.qpn) + " dup op 0x"
                    + Integer.toHexString(op) + " psn 0x" + Integer.toHexString(psn) + " ePsn 0x"
                    + Integer.toHexString(ePsn) + " no resource; have:");
            for (Resource r : resources) {
                sb.append(' ').append(r.valid).append(r.atomic ? "A" : "R").append(Integer.toHexString(r.firstPsn))
                        .append("..").append(Integer.toHexString(r.lastPsn));
            }
            System.err.println(sb);
        }
    }

    private void ud(Packet p, int op) {
        if (op != Opcode.UD_SEND_ONLY && op != Opcode.UD_SEND_ONLY_WITH_IMMEDIATE) {
            qp.hca.counters.inc(Counter.MALFORMED);
            return;
        }
        deth.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_DETH));
        if (deth.qkey() != qp.qkey) {
            qp.hca.counters.inc(Counter.BAD_QKEY);
            return;
        }
        int len = p.payloadLength;
        if (!qp.usesSrq) {
            long room = qp.rq.headTotalLength();
            if (room < 0) {
                qp.hca.counters.inc(Counter.NO_RECV_DROPS);
                return;
            }
            if (room < GRH_BYTES + len) {
                // As rxe (class D): the datagram is dropped, the receive stays posted for the next one.
                qp.hca.counters.inc(Counter.UD_LENGTH_DROPS);
                return;
            }
        }
        if (!qp.rq.take(recv)) {
            qp.hca.counters.inc(Counter.NO_RECV_DROPS);
            return;
        }
        NetworkHeaderType type = fillGrh(p, len);
        int st = scatterRecv(0, null, grh, GRH_BYTES);
        if (st == SCATTER_OK) {
            st = scatterRecv(GRH_BYTES, p, null, len);
        }
        if (st == SCATTER_LENGTH) {
            // Only an SRQ receive gets here (it was taken before its size could be seen): it completes
            // in error, and the UD QP carries on.
            qp.hca.counters.inc(Counter.UD_LENGTH_DROPS);
            qp.pushRecvCompletion(recv.wrId, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, 0, 0, 0, 0, false);
            return;
        }
        if (st != SCATTER_OK) {
            qp.pushRecvCompletion(recv.wrId, WcStatus.LOC_QP_OP_ERR, WcOpcode.RECV, 0, 0, 0, 0, 0, false);
            qp.enterError();
            return;
        }
        int flags = WcFlag.GRH;
        int imm = 0;
        if (Opcode.hasImmDt(op)) {
            flags |= WcFlag.WITH_IMM;
            imm = immDt.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_IMM_DT)).immediate();
        }
        qp.hca.counters.inc(Counter.RDMA_RECVS);
        qp.pushUdRecvCompletion(recv.wrId, GRH_BYTES + len, flags, imm, deth.srcQpn(), bth.solicitedEvent(), type);
    }

    /**
     * Writes the 40-byte GRH area of a UD receive as rxe does: the packet's network header as it was on
     * the wire. IPv4: the 20-byte IPv4 header in the area's last 20 bytes (the first 20 are zero); IPv6:
     * the 40-byte IPv6 header. Lengths count the UDP header, BTH onward, pad and ICRC.
     */
    private NetworkHeaderType fillGrh(Packet p, int payload) {
        Gid src = p.srcGid;
        Gid dst = p.dstGid;
        int udpLength = UdpHeader.LENGTH + p.headerLength + payload + ((4 - (payload & 3)) & 3) + Icrc.LENGTH;
        grh.fill((byte) 0);
        if (src != null && dst != null && src.isIpv4Mapped()) {
            ip4.wrap(grh, GRH_BYTES - Ipv4Header.LENGTH).writeUdp(p.trafficClass, Ipv4Header.LENGTH + udpLength, 0,
                    true, p.hopLimit, address4(src), address4(dst));
            return NetworkHeaderType.IPV4;
        }
        ip6.wrap(grh, 0).writeUdp(p.trafficClass, p.flowLabel, udpLength, p.hopLimit);
        for (int i = 0; i < 16; i++) {
            grh.set(ValueLayout.JAVA_BYTE, Ipv6Header.SOURCE_ADDRESS_OFFSET + i, src == null ? 0 : src.byteAt(i));
            grh.set(ValueLayout.JAVA_BYTE, Ipv6Header.DESTINATION_ADDRESS_OFFSET + i, dst == null ? 0 : dst.byteAt(i));
        }
        return NetworkHeaderType.IPV6;
    }

    private static int address4(Gid g) {
        return (g.byteAt(12) & 0xFF) << 24 | (g.byteAt(13) & 0xFF) << 16 | (g.byteAt(14) & 0xFF) << 8
                | (g.byteAt(15) & 0xFF);
    }

    // ------------------------------------------------------------------ helpers

    private MemKey checkKey(int rkey, long va, long length, int accessBit) {
        MemKey k = qp.hca.keys.lookup(rkey);
        if (k == null || !k.valid || k.pd != qp.pd || (k.access & accessBit) == 0 || !k.covers(va, length)
                || !k.alive()) {
            return null;
        }
        if (k.kind == MemKey.MW_TYPE2 && k.boundQp != qp) {
            return null;
        }
        return k;
    }

    private boolean sizeOk(int op, int len) {
        int mtu = qp.mtu;
        if (Opcode.isFirst(op) || Opcode.isMiddle(op)) {
            return len == mtu;
        }
        if (Opcode.isLast(op)) {
            return len > 0 && len <= mtu;
        }
        return len <= mtu;
    }

    /** Writes into the current receive WQE at {@code offset}: from the packet payload or from {@code src}. */
    private int scatterRecv(long offset, Packet p, MemorySegment src, int len) {
        if (offset + len > recv.totalLength) {
            return SCATTER_LENGTH;
        }
        return switch (Scatter.into(qp, recv.addr, recv.length, recv.lkey, recv.numSge, offset, p, src, len)) {
            case Scatter.OK -> SCATTER_OK;
            case Scatter.SOURCE_GONE -> SCATTER_SOURCE_GONE;
            default -> SCATTER_PROTECTION;
        };
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
        if (QpEngine.DEBUG) {
            new Throwable("responder qp 0x" + Integer.toHexString(qp.qpn) + " NAK 0x" + Integer.toHexString(nak)
                    + " psn 0x" + Integer.toHexString(psn) + " ePsn 0x" + Integer.toHexString(ePsn) + " inProgress "
                    + inProgress + " bth op 0x" + Integer.toHexString(bth.opcode())).printStackTrace();
        }
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

    private void advance(int psn, boolean rc) {
        ePsn = Psn.add(psn, 1);
        nakSent = false;
        if (rc && bth.ackReq()) {
            sendAck(ACK_SYNDROME, psn);
        }
    }

    private Resource nextResource() {
        Resource r = resources[resNext];
        resNext = (resNext + 1) % resources.length;
        return r;
    }

    private Packet responsePacket(int op, int psn, int payload) {
        Packet p = qp.hca.packets.acquire();
        out.wrap(p.buffer, 0).write(op, false, (4 - (payload & 3)) & 3, qp.pkey, qp.destQpn, false, psn);
        p.headerLength = Opcode.headerLength(op);
        p.srcGid = qp.sgid;
        p.dstGid = qp.dgid;
        p.hopLimit = qp.avHopLimit;
        p.trafficClass = qp.avTrafficClass;
        p.flowLabel = qp.avFlowLabel;
        return p;
    }

    /**
     * Sends an acknowledgement. Positive ACKs are cumulative, so they are coalesced: the ACK goes out
     * when the QP's task has taken in the packets queued for it ({@link #flushAck()}), carrying the
     * latest PSN and MSN; a burst of packets with AckReq set (or of duplicates, during a peer's
     * retransmission) costs one ACK instead of one each. NAKs go at once, after any pending ACK.
     */
    private void sendAck(int syndrome, int psn) {
        if (syndrome == ACK_SYNDROME) {
            ackPending = true;
            ackPendingPsn = psn;
            return;
        }
        flushAck();
        sendAckNow(syndrome, psn);
    }

    /** Sends the coalesced ACK, if one is pending. */
    void flushAck() {
        if (ackPending) {
            ackPending = false;
            QpState s = qp.state();
            if (s != QpState.ERR && s != QpState.RESET) { // a QP that failed meanwhile answers nothing more
                sendAckNow(ACK_SYNDROME, ackPendingPsn);
            }
        }
    }

    private void sendAckNow(int syndrome, int psn) {
        Packet p = responsePacket(Opcode.RC_ACKNOWLEDGE, psn, 0);
        aeth.wrap(p.buffer, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE, Opcode.HEADER_AETH)).write(syndrome, msn);
        qp.hca.send(p);
    }

    private void sendAtomicAck(int psn, long original) {
        flushAck();
        int op = Opcode.RC_ATOMIC_ACKNOWLEDGE;
        Packet p = responsePacket(op, psn, 0);
        aeth.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_AETH)).write(ACK_SYNDROME, msn);
        atomicAck.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_ATOMIC_ACK_ETH)).originalValue(original);
        qp.hca.send(p);
    }

    /**
     * Sends the READ responses for {@code [va, va + length)} from PSN {@code psn}; {@code fromStart} is
     * false for a re-request from the middle of a READ, whose responses continue it (MIDDLE.., LAST).
     */
    private void sendReadResponses(MemKey k, long va, long length, int psn, boolean fromStart) {
        flushAck();
        int mtu = qp.mtu;
        int packets = (int) Math.max(1, (length + mtu - 1) / mtu);
        long off = 0;
        for (int i = 0; i < packets; i++) {
            int len = (int) Math.min(mtu, length - off);
            boolean first = fromStart && i == 0;
            boolean last = i == packets - 1;
            int pos = first ? (last ? Opcode.ONLY : Opcode.FIRST) : (last ? Opcode.LAST : Opcode.MIDDLE);
            int op = Opcode.readResponseOpcode(pos);
            Packet p = responsePacket(op, Psn.add(psn, i), len);
            if (Opcode.hasAeth(op)) {
                aeth.wrap(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_AETH)).write(ACK_SYNDROME, msn);
            }
            if (len > 0) {
                p.addPiece(k.segment, k.offsetOf(va + off), len);
            }
            off += len;
            qp.hca.send(p);
        }
    }
}
