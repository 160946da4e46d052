// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.AtomicEth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Deth;
import org.rdma4j.soft.wire.Ieth;
import org.rdma4j.soft.wire.ImmDt;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.soft.wire.Reth;
import org.rdma4j.soft.wire.RnrTimer;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * The requester: turns posted work requests into request packets. It segments messages at the path
 * MTU, stamps 24-bit PSNs, asks for an ACK on the last packet of each message that needs one (see
 * {@link #lastAsksForAck}) and every {@value #ACK_EVERY} packets, keeps at most {@value #WINDOW_PSNS} PSNs unacknowledged, honours
 * max_rd_atomic and fences, and executes local operations (BIND_MW, LOCAL_INV) in order; rxe's
 * rxe_req.c; a long READ goes as several READ requests ({@link ReadPieces}). One pass of {@link #step}
 * walks the send queue from its cursor: next WQE, may it start (SQD, fence, local invalidate fence,
 * read/atomic credits, window), start it, send its next packet. The completer moves it back with
 * {@link #rewind} and gives read/atomic credits back ({@link #readOrAtomicAnswered}). QP task only.
 */
final class Requester {
    /** Unacknowledged PSNs allowed in flight. */
    static final int WINDOW_PSNS = 128;
    /** Packets between ACK requests inside a long message. */
    static final int ACK_EVERY = 64;

    private final QpEngine qp;
    private final SendQueue sq;
    /** The PSN of the next request packet. */
    private int psn;
    /** READ requests and atomics sent, not answered in full: each holds a responder resource. */
    private int outstandingRdAtomic;
    private int sinceAckReq;
    /** The one-packet WRITEs and SENDs handed over on the in-process path ({@link #sendDirect}); made on first use. */
    private PacketInfo handOver;
    /**
     * After a rewind: the PSN the requester had reached, before which the last packet of every message
     * asks for an ACK again (see {@link #lastAsksForAck(SendWqe, Path)}); valid while {@link #eagerAck}.
     */
    private int eagerAckEnd;
    private boolean eagerAck;

    Requester(QpEngine qp, SendQueue sq) {
        this.qp = qp;
        this.sq = sq;
    }

    /** modify(SQ_PSN). */
    void setPsn(int p) {
        psn = p & Psn.MASK;
    }

    /** The PSN of the next request packet (query_qp; the completer's bound for ACKs). */
    int nextPsn() {
        return psn;
    }

    void reset() {
        outstandingRdAtomic = 0;
        sinceAckReq = 0;
        eagerAck = false;
    }

    /** An atomic retired, or the last response of one READ request arrived: a resource is free. */
    void readOrAtomicAnswered() {
        outstandingRdAtomic = Math.max(0, outstandingRdAtomic - 1);
    }

    /** The send queue was flushed: nothing holds a responder resource. */
    void flushed() {
        outstandingRdAtomic = 0;
    }

    /**
     * Whether the last {@link #step}'s progress was only packets sent (no local operation executed, no
     * WQE finished or skipped, no local error): then a second pass would find the send queue as this
     * one left it (see {@code QpEngine.doWork}).
     */
    private boolean onlySent;

    /** The last {@link #step} made progress only by sending (see {@link #onlySent}). */
    boolean stepOnlySent() {
        return onlySent;
    }

    /** Sends what the send queue, the window and the state allow; true on progress. */
    boolean step() {
        onlySent = true;
        QpState s = qp.state;
        if ((s != QpState.RTS && s != QpState.SQD) || qp.completer.rnrWaiting()) {
            return false;
        }
        // Over a link that sends in batches (UDP: sendmmsg) the packets of this step are collected and
        // handed over together, before the step returns (so before the task is released: the QP's
        // packets keep their order); elsewhere each leaves at once.
        batching = qp.path().sendsInBatches();
        try {
            return stepSending(s);
        } finally {
            flushOutbox();
            batching = false;
        }
    }

    /** Packets of this step not yet handed to the link (see {@link #step()}); task only. */
    private final Packet[] outbox = new Packet[OUTBOX];
    private int outboxSize;
    private boolean batching;
    /** Most packets collected before they are handed over (a 64 KiB WRITE at MTU 4096). */
    static final int OUTBOX = 16;

    /** Sends {@code p} now, or collects it for the step's batch. */
    private void send(Packet p) {
        if (!batching) {
            qp.send(p);
            return;
        }
        outbox[outboxSize++] = p;
        if (outboxSize == OUTBOX) {
            flushOutbox();
        }
    }

    private void flushOutbox() {
        int n = outboxSize;
        if (n == 1) {
            Packet p = outbox[0];
            outbox[0] = null;
            outboxSize = 0;
            qp.send(p); // one packet: the plain send (sendto), no batch to build
        } else if (n > 1) {
            outboxSize = 0;
            qp.send(outbox, n);
        }
    }

    private boolean stepSending(QpState s) {
        boolean rc = qp.transport == Opcode.TRANSPORT_RC;
        boolean progress = false;
        while (sq.hasAtCursor()) {
            SendWqe w = sq.atCursor();
            if (w.done) {
                // finished before a rewind brought the cursor back over it
                if (w.started && !w.opcode.isLocal()) {
                    psn = Psn.add(w.lastPsn, 1);
                }
                sq.advanceCursor();
                progress = true;
                onlySent = false;
                continue;
            }
            if (!w.started) {
                if (s == QpState.SQD && sq.cursor() >= qp.sqdLimit) {
                    break; // posted in SQD: waits for RTS
                }
                if ((w.flags & SendFlag.FENCE) != 0 && outstandingRdAtomic > 0) {
                    break;
                }
                if (w.opcode == WrOpcode.LOCAL_INV && !sq.allRetiredUpToCursor()) {
                    // implicit local invalidate fence (IBA 10.6.5.1, as rxe): every earlier WR completes
                    // first, so none of them, nor a retransmission of one, meets the invalidated key
                    break;
                }
                if (w.opcode.isLocal()) {
                    w.finish(LocalAccess.executeLocal(qp, w));
                    sq.advanceCursor();
                    progress = true;
                    onlySent = false;
                    if (w.status != WcStatus.SUCCESS) {
                        break;
                    }
                    continue;
                }
                if (w.opcode == WrOpcode.RDMA_READ ? !ReadPieces.mayGo(qp, w, psn, 0, outstandingRdAtomic)
                        : w.opcode.isAtomic() && outstandingRdAtomic >= Math.max(1, qp.maxRdAtomic)) {
                    break;
                }
                if (rc && windowFull()) {
                    break;
                }
                if (qp.transport == Opcode.TRANSPORT_UD && w.totalLength > qp.mtuBytes) {
                    // C10-93.1.1, as rxe: a UD message longer than the path MTU is not sent, yet its WQE
                    // completes successfully (the datagram is silently dropped).
                    w.finish(WcStatus.SUCCESS);
                    sq.advanceCursor();
                    progress = true;
                    onlySent = false;
                    continue;
                }
                if (qp.transport == Opcode.TRANSPORT_UD && !w.ahInQpPd) {
                    // rxe_get_av: an address handle of another PD gives no address vector; the WR
                    // completes LOC_QP_OP_ERR and the QP goes to ERR (a C program sees it so on rxe)
                    return failLocally(w, WcStatus.LOC_QP_OP_ERR);
                }
                start(w);
            } else if (rc && windowFull()) {
                break;
            } else if (w.opcode == WrOpcode.RDMA_READ && !ReadPieces.nextMayGo(qp, w, outstandingRdAtomic)) {
                break; // the next piece of a long READ waits for room and a responder resource
            }
            if (!sendOne(w)) {
                return failLocally(w, WcStatus.LOC_PROT_ERR);
            }
            progress = true;
            if (w.sent) {
                sq.advanceCursor();
                if (!rc) {
                    w.done = true; // UC/UD: finished when sent, the retirement comes in this pass
                    onlySent = false;
                }
            }
        }
        return progress;
    }

    /** The WQE at the cursor failed here: it completes with {@code status} and the QP goes to ERR. */
    private boolean failLocally(SendWqe w, WcStatus status) {
        onlySent = false;
        flushOutbox(); // what went before the failed WR leaves before the QP goes to ERR
        w.finish(status);
        sq.advanceCursor();
        qp.completer.retire();
        if (qp.state != QpState.ERR) {
            qp.enterError();
        }
        return true;
    }

    private boolean windowFull() {
        return Psn.diff(psn, Psn.add(qp.completer.lastAckedPsn(), 1)) >= WINDOW_PSNS;
    }

    private void start(SendWqe w) {
        w.started = true;
        w.sent = false;
        w.firstPsn = psn;
        int mtu = qp.mtuBytes;
        int packets = (int) Math.max(1, (w.totalLength + mtu - 1) / mtu);
        if (w.opcode.isAtomic()) {
            packets = 1;
        }
        w.lastPsn = Psn.add(psn, packets - 1);
        w.nextPsn = psn;
        w.respPsn = psn;
        w.sendOffset = 0;
        if (w.opcode.isAtomic()) {
            outstandingRdAtomic++; // a READ counts each of its requests as it sends it
        }
    }

    /**
     * Sends the next packet of {@code w} (or its message without a packet, where {@link #sendDirect}
     * can); false on a local protection error.
     */
    private boolean sendOne(SendWqe w) {
        // a one-packet RC WRITE or SEND first tries the in-process fabric without a packet; kept apart
        // from the packet path below so that the JIT inlines this test (and sendDirect) into step
        WrOpcode op = w.opcode;
        if ((op == WrOpcode.RDMA_WRITE ? w.totalLength > 0 : op == WrOpcode.SEND || op == WrOpcode.SEND_WITH_IMM)
                && w.sendOffset == 0 && w.totalLength <= qp.mtuBytes && qp.transport == Opcode.TRANSPORT_RC
                && sendDirect(w)) {
            return true;
        }
        return sendPacket(w);
    }

    /** Builds and sends the next packet of {@code w}; false on a local protection error. */
    private boolean sendPacket(SendWqe w) {
        Packet p = qp.hca.packets.acquire();
        MemorySegment b = p.buffer;
        int mtu = qp.mtuBytes;
        int op;
        boolean last;
        int payload = 0;
        WrOpcode wop = w.opcode;
        if (wop.isSend() || wop.isWrite()) {
            long remaining = w.totalLength - w.sendOffset;
            if (wop.isWrite() && remaining > mtu && qp.transport == Opcode.TRANSPORT_RC) {
                int burst = burstPackets(w, remaining, mtu);
                if (burst > 1) {
                    return sendBurst(p, w, burst, remaining, mtu);
                }
            }
            payload = (int) Math.min(mtu, remaining);
            boolean first = w.sendOffset == 0;
            last = remaining <= mtu;
            int pos = first ? (last ? Opcode.ONLY : Opcode.FIRST) : (last ? Opcode.LAST : Opcode.MIDDLE);
            boolean withImm = last && (wop == WrOpcode.SEND_WITH_IMM || wop == WrOpcode.RDMA_WRITE_WITH_IMM);
            boolean withInv = last && wop == WrOpcode.SEND_WITH_INV;
            op = wop.isSend() ? Opcode.sendOpcode(qp.transport, pos, withImm, withInv)
                    : Opcode.writeOpcode(qp.transport, pos, withImm);
            boolean se = last && (w.flags & SendFlag.SOLICITED) != 0;
            header(b, op, se, payload, last, w.nextPsn, w);
            if (Opcode.hasReth(op)) {
                Reth.writeAt(b, Opcode.offsetOf(op, Opcode.HEADER_RETH), w.remoteAddr, w.rkey, (int) w.totalLength);
            }
            if (Opcode.hasImmDt(op)) {
                ImmDt.writeAt(b, Opcode.offsetOf(op, Opcode.HEADER_IMM_DT), w.imm);
            }
            if (Opcode.hasIeth(op)) {
                Ieth.writeAt(b, Opcode.offsetOf(op, Opcode.HEADER_IETH), w.invRkey);
            }
            p.headerLength = Opcode.headerLength(op);
            if (!LocalAccess.gather(qp, w, p, w.sendOffset, payload)) {
                p.release();
                return false;
            }
            w.sendOffset += payload;
            w.nextPsn = Psn.add(w.nextPsn, 1);
            psn = w.nextPsn;
            if (last) {
                w.sent = true;
            }
        } else if (wop == WrOpcode.RDMA_READ) {
            op = Opcode.RC_RDMA_READ_REQUEST;
            header(b, op, false, 0, true, w.nextPsn, w);
            ReadPieces.writeRequest(w, b, Opcode.offsetOf(op, Opcode.HEADER_RETH), mtu);
            p.headerLength = Opcode.headerLength(op);
            psn = w.nextPsn;
            outstandingRdAtomic++;
        } else {
            boolean cas = wop == WrOpcode.ATOMIC_CMP_AND_SWP;
            op = cas ? Opcode.RC_COMPARE_SWAP : Opcode.RC_FETCH_ADD;
            header(b, op, false, 0, true, w.firstPsn, w);
            AtomicEth.writeAt(b, Opcode.offsetOf(op, Opcode.HEADER_ATOMIC_ETH), w.remoteAddr, w.rkey,
                    cas ? w.swap : w.compareAdd, cas ? w.compareAdd : 0);
            p.headerLength = Opcode.headerLength(op);
            w.sent = true;
            psn = Psn.add(w.firstPsn, 1);
        }
        if (qp.type == QpType.UD) {
            p.srcGid = w.sgid;
            p.dstGid = w.dgid;
            p.hopLimit = w.hopLimit;
            p.trafficClass = w.trafficClass;
            p.flowLabel = w.flowLabel;
        } else {
            p.srcGid = qp.sgid;
            p.dstGid = qp.dgid;
            p.hopLimit = qp.avHopLimit;
            p.trafficClass = qp.avTrafficClass;
            p.flowLabel = qp.avFlowLabel;
        }
        if (qp.transport == Opcode.TRANSPORT_RC) {
            qp.completer.armRetransmit();
        } else {
            // UC and UD complete on send: the buffer is the application's again, so copy the payload.
            try {
                p.materialize();
            } catch (IllegalStateException e) {
                p.release(); // freed since the gather (Arena.close raced with us): a local protection error
                return false;
            }
        }
        send(p);
        return true;
    }

    /**
     * A WRITE or SEND that fits one packet (an RDMA WRITE ONLY, a SEND ONLY with or without immediate),
     * handed straight to the connected QP's responder on an in-process fabric
     * ({@link org.rdma4j.soft.link.DirectLink}): no {@link Packet}, no headers written and parsed again,
     * the payload copied once from the WQE's inline copy or its one gather entry into the target (the
     * WRITE's rkey range, the SEND's receive WQE), as a {@link PacketInfo} the peer's responder takes
     * in through the same checks as the packet ({@link Path#handOver}): a bad key, a PSN gap or no
     * receive posted end as for the packet, in a NAK or an RNR NAK sent back. When the path cannot hand
     * it over (over a link, a busy peer, a port down, the sender's memory gone) nothing has changed on
     * either side and false sends the packet as usual; so does a local protection error. The
     * requester's state then moves as if the packet had been sent. Allocation free.
     */
    private boolean sendDirect(SendWqe w) {
        Path path = qp.path();
        if (path.route() == null) {
            return false; // over a link: nothing to hand over
        }
        int len = (int) w.totalLength;
        MemorySegment src;
        long srcOffset;
        if (w.isInline) {
            src = w.inlineData;
            srcOffset = 0;
        } else if (len == 0) {
            src = null; // a SEND without data
            srcOffset = 0;
        } else if (w.numSge == 1) {
            MemKey k = LocalAccess.gatherKey(qp, w, len);
            if (k == null) {
                return false;
            }
            src = k.segment;
            srcOffset = k.offsetOf(w.addr[0]);
        } else {
            return false;
        }
        // AckReq as header() would set it, committed only once the peer took the WRITE or SEND
        boolean ackReq = lastAsksForAck(w, path) || sinceAckReq + 1 >= ACK_EVERY;
        boolean write = w.opcode == WrOpcode.RDMA_WRITE;
        int op = write ? Opcode.RC_RDMA_WRITE_ONLY
                : w.opcode == WrOpcode.SEND_WITH_IMM ? Opcode.RC_SEND_ONLY_WITH_IMMEDIATE : Opcode.RC_SEND_ONLY;
        boolean solicited = (w.flags & SendFlag.SOLICITED) != 0;
        int imm = w.opcode == WrOpcode.SEND_WITH_IMM ? w.imm : 0;
        PacketInfo info = handOver;
        if (info == null) {
            info = new PacketInfo();
            handOver = info;
        }
        if (!path.handOver(info.handOver(op, w.nextPsn, qp.pkey, ackReq, solicited, write ? w.remoteAddr : 0,
                write ? w.rkey : 0, imm, src, srcOffset, len))) {
            return false;
        }
        sinceAckReq = ackReq ? 0 : sinceAckReq + 1;
        w.sendOffset = len;
        w.nextPsn = Psn.add(w.nextPsn, 1);
        psn = w.nextPsn;
        w.sent = true;
        qp.completer.armRetransmit();
        return true;
    }

    /**
     * How many packets of {@code w}'s WRITE go as one burst (see {@link Packet#burstPackets}): on an
     * in-process fabric, as many as the send window takes; over a link that carries bursts (a
     * shared-memory ring, {@link org.rdma4j.soft.link.Link#burstLimit}) at most its limit; the last
     * packet of a WRITE with immediate excepted (it consumes a receive and may meet an RNR NAK: it goes
     * alone); 1 on any other link.
     */
    private int burstPackets(SendWqe w, long remaining, int mtu) {
        int limit = qp.path().burstLimit(mtu);
        if (limit <= 1) {
            return 1;
        }
        long left = (remaining + mtu - 1) / mtu;
        int room = WINDOW_PSNS - Psn.diff(psn, Psn.add(qp.completer.lastAckedPsn(), 1));
        int k = (int) Math.min(Math.min(left, room), limit);
        if (k == left && w.opcode == WrOpcode.RDMA_WRITE_WITH_IMM) {
            k--;
        }
        return k;
    }

    /**
     * Sends the next {@code k} packets of {@code w}'s WRITE as one hand-off: the first packet's headers
     * (BTH with its PSN, the RETH when it is the first of the message), the payload of all {@code k}
     * (still slices of the source: the responder's copy is the only one), AckReq when the last of the
     * {@code k} would carry it. The requester's state moves as if {@code k} packets went out.
     */
    private boolean sendBurst(Packet p, SendWqe w, int k, long remaining, int mtu) {
        MemorySegment b = p.buffer;
        boolean first = w.sendOffset == 0;
        boolean last = (remaining + mtu - 1) / mtu == k;
        int payload = last ? (int) remaining : k * mtu;
        int op = Opcode.writeOpcode(Opcode.TRANSPORT_RC, first ? Opcode.FIRST : Opcode.MIDDLE, false);
        int lastOp = Opcode.writeOpcode(Opcode.TRANSPORT_RC, last ? Opcode.LAST : Opcode.MIDDLE, false);
        boolean ackReq = (last && lastAsksForAck(w, qp.path())) || sinceAckReq + k >= ACK_EVERY;
        sinceAckReq = ackReq ? 0 : sinceAckReq + k;
        boolean se = last && (w.flags & SendFlag.SOLICITED) != 0;
        Bth.writeAt(b, 0, op, se, 0, qp.pkey, qp.destQpn, ackReq, w.nextPsn);
        if (first) {
            Reth.writeAt(b, Opcode.offsetOf(op, Opcode.HEADER_RETH), w.remoteAddr, w.rkey, (int) w.totalLength);
        }
        p.headerLength = Opcode.headerLength(op);
        p.burstPackets = k;
        p.burstMtu = mtu;
        p.burstLastOpcode = lastOp;
        if (!LocalAccess.gather(qp, w, p, w.sendOffset, payload)) {
            p.release();
            return false;
        }
        w.sendOffset += payload;
        w.nextPsn = Psn.add(w.nextPsn, k);
        psn = w.nextPsn;
        if (last) {
            w.sent = true;
        }
        p.srcGid = qp.sgid;
        p.dstGid = qp.dgid;
        p.hopLimit = qp.avHopLimit;
        p.trafficClass = qp.avTrafficClass;
        p.flowLabel = qp.avFlowLabel;
        qp.completer.armRetransmit();
        qp.send(p);
        return true;
    }

    private void header(MemorySegment b, int op, boolean se, int payload, boolean last, int packetPsn, SendWqe w) {
        boolean ackReq = false;
        if (qp.transport == Opcode.TRANSPORT_RC) {
            if ((last && lastAsksForAck(w, qp.path())) || ++sinceAckReq >= ACK_EVERY) {
                ackReq = true;
                sinceAckReq = 0;
            }
        }
        boolean ud = qp.transport == Opcode.TRANSPORT_UD;
        Bth.writeAt(b, 0, op, se, (4 - (payload & 3)) & 3, qp.pkey, ud ? w.remoteQpn : qp.destQpn, ackReq,
                packetPsn);
        if (ud) {
            // A Q_Key with the high bit set means "use the QP's own Q_Key" (IBTA 10.2.5).
            int qkey = w.remoteQkey < 0 ? qp.qkey : w.remoteQkey;
            Deth.writeAt(b, Opcode.offsetOf(op, Opcode.HEADER_DETH), qkey, qp.qpn);
        }
    }

    /**
     * Whether the last packet of {@code w} asks for an ACK. Always for a signaled WR, a READ or an
     * atomic; an unsignaled SEND or WRITE need not be acknowledged on its own, so the requester
     * coalesces ACKs: on the in-process fabric ({@link org.rdma4j.soft.link.DirectLink}) it asks when a
     * quarter of the send queue or half of the send window waits for retirement; over a link (UDP,
     * shared memory) every {@link #linkAckInterval} packets, so the responder sends one ACK per that
     * many packets instead of one per message (over UDP each ACK is a datagram both sides pay a
     * system call for). A responder that is rdma4j acknowledges an owed message
     * {@value Acknowledger#LINK_DELAYED_ACK_NS} ns later anyway; one that only answers AckReq (rxe) leaves
     * the last unsignaled messages of a burst to the ACK timeout, whose retransmission asks again
     * ({@link #eagerAck}). Coalescing needs an ACK timeout far above that delay, so a late ACK never
     * looks like a lost one; over a link also a finite one, so nothing waits forever on a responder
     * that owes but never sends.
     */
    private boolean lastAsksForAck(SendWqe w, Path path) {
        if (w.signaled || w.isReadOrAtomic()) {
            return true;
        }
        boolean direct = path instanceof Path.InProcess;
        if (qp.timeoutCode == 0 ? !direct : RnrTimer.ackTimeoutNanos(qp.timeoutCode) < LAZY_ACK_MIN_TIMEOUT_NS) {
            return true;
        }
        if (eagerAck) {
            if (Psn.diff(w.lastPsn, eagerAckEnd) < 0) {
                return true; // a retransmitted message
            }
            eagerAck = false;
        }
        if (!direct) {
            return sinceAckReq + 1 >= linkAckInterval();
        }
        return sq.head() - sq.tail() >= Math.max(1, qp.maxSendWr / 4)
                || Psn.diff(w.lastPsn, qp.completer.lastAckedPsn()) >= WINDOW_PSNS / 2;
    }

    /**
     * Over a link, an unsignaled message asks for an ACK when this many packets went without one: a
     * quarter of the send window, or of the send queue when that is shorter (so its slots are retired
     * in time).
     */
    private int linkAckInterval() {
        return Math.max(1, Math.min(WINDOW_PSNS / 4, qp.maxSendWr / 4));
    }

    /** ACKs are coalesced only under an ACK timeout of at least this (timeout code 13, 33.6 ms). */
    static final long LAZY_ACK_MIN_TIMEOUT_NS = 30_000_000L;

    /**
     * Goes back to PSN {@code toPsn} (retransmission after a timeout, a NAK or an RNR wait): the
     * work request containing it resends from there, later ones start over. False if no outstanding
     * request contains {@code toPsn}.
     */
    boolean rewind(int toPsn, String cause) {
        long found = sq.indexContaining(toPsn);
        if (found < 0) {
            return false;
        }
        SendWqe w = sq.at(found);
        if (w.opcode.isAtomic()) {
            toPsn = w.firstPsn;
        } else if (w.opcode == WrOpcode.RDMA_READ) {
            w.respPsn = toPsn = ReadPieces.resumeAt(w, toPsn); // then to its piece's end, piece by piece
        } else {
            w.sendOffset = (long) Psn.diff(toPsn, w.firstPsn) * qp.mtuBytes;
        }
        w.nextPsn = toPsn;
        w.sent = false;
        long oldCursor = sq.cursor();
        sq.rewindCursorTo(found);
        if (!eagerAck || Psn.diff(psn, eagerAckEnd) > 0) {
            eagerAckEnd = psn;
        }
        eagerAck = true;
        psn = toPsn;
        sinceAckReq = 0;
        outstandingRdAtomic = ReadPieces.rewound(sq, found, oldCursor);
        qp.hca.counters.inc(Counter.RETRANSMITS);
        EngineEvents.retransmit(qp, toPsn, cause);
        return true;
    }
}
