package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.link.Packet;
import org.rdma4j.soft.wire.AtomicEth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Deth;
import org.rdma4j.soft.wire.Ieth;
import org.rdma4j.soft.wire.ImmDt;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.soft.wire.Reth;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * The requester: turns posted work requests into request packets. It segments messages at the path
 * MTU, stamps 24-bit PSNs, asks for an ACK on the last packet of each message and every
 * {@value #ACK_EVERY} packets, keeps at most {@value #WINDOW} PSNs unacknowledged, honours
 * max_rd_atomic and fences, and executes local operations (BIND_MW, LOCAL_INV) in order. Runs only
 * inside the QP task.
 */
final class Requester {
    /** Unacknowledged PSNs allowed in flight. */
    static final int WINDOW = 128;
    /** Packets between ACK requests inside a long message. */
    static final int ACK_EVERY = 64;

    private final QpEngine qp;
    private final Bth bth = new Bth();
    private final Reth reth = new Reth();
    private final ImmDt immDt = new ImmDt();
    private final Ieth ieth = new Ieth();
    private final Deth deth = new Deth();
    private final AtomicEth atomicEth = new AtomicEth();
    /** The PSN of the next request packet. */
    int psn;
    int outstandingRdAtomic;
    private int sinceAckReq;

    Requester(QpEngine qp) {
        this.qp = qp;
    }

    void setPsn(int p) {
        psn = p & Psn.MASK;
        qp.completer.lastAckedPsn = Psn.add(psn, -1);
    }

    void reset() {
        outstandingRdAtomic = 0;
        sinceAckReq = 0;
    }

    /** Sends what the send queue, the window and the state allow; true on progress. */
    boolean step() {
        QpState s = qp.state;
        if ((s != QpState.RTS && s != QpState.SQD) || qp.completer.rnrWaiting) {
            return false;
        }
        boolean rc = qp.transport == Opcode.TRANSPORT_RC;
        boolean progress = false;
        while (qp.sqCursor < qp.sqHead) {
            SendWqe w = qp.wqe(qp.sqCursor);
            if (w.done) {
                // finished before a rewind brought the cursor back over it
                if (w.started && !w.opcode.isLocal()) {
                    psn = Psn.add(w.lastPsn, 1);
                }
                qp.sqCursor++;
                progress = true;
                continue;
            }
            if (!w.started) {
                if (s == QpState.SQD) {
                    break;
                }
                if ((w.flags & SendFlag.FENCE) != 0 && outstandingRdAtomic > 0) {
                    break;
                }
                if (w.opcode == WrOpcode.LOCAL_INV && qp.sqTail != qp.sqCursor) {
                    // implicit local invalidate fence (IBA 10.6.5.1, as rxe): every earlier WR completes
                    // first, so none of them, nor a retransmission of one, meets the invalidated key
                    break;
                }
                if (w.opcode.isLocal()) {
                    w.started = true;
                    w.sent = true;
                    w.status = executeLocal(w);
                    w.done = true;
                    qp.sqCursor++;
                    progress = true;
                    if (w.status != WcStatus.SUCCESS) {
                        break;
                    }
                    continue;
                }
                if (w.isReadOrAtomic() && outstandingRdAtomic >= Math.max(1, qp.maxRdAtomic)) {
                    break;
                }
                if (rc && windowFull()) {
                    break;
                }
                if (qp.transport == Opcode.TRANSPORT_UD && w.totalLength > qp.mtu) {
                    // C10-93.1.1, as rxe: a UD message longer than the path MTU is not sent, yet its WQE
                    // completes successfully (the datagram is silently dropped).
                    w.started = true;
                    w.sent = true;
                    w.done = true;
                    qp.sqCursor++;
                    progress = true;
                    continue;
                }
                if (qp.transport == Opcode.TRANSPORT_UD && !w.ahInQpPd) {
                    // rxe_get_av: an address handle of another PD gives no address vector; the WR
                    // completes LOC_QP_OP_ERR and the QP goes to ERR (a C program sees it so on rxe)
                    w.started = true;
                    w.sent = true;
                    w.done = true;
                    w.status = WcStatus.LOC_QP_OP_ERR;
                    qp.sqCursor++;
                    qp.completer.retire();
                    if (qp.state != QpState.ERR) {
                        qp.enterError();
                    }
                    return true;
                }
                start(w);
            } else if (rc && windowFull()) {
                break;
            }
            if (!sendOne(w)) {
                w.status = WcStatus.LOC_PROT_ERR;
                w.done = true;
                w.sent = true;
                qp.sqCursor++;
                qp.completer.retire();
                if (qp.state != QpState.ERR) {
                    qp.enterError();
                }
                return true;
            }
            progress = true;
            if (w.sent) {
                qp.sqCursor++;
                if (!rc) {
                    w.done = true;
                }
            }
        }
        return progress;
    }

    private boolean windowFull() {
        return Psn.diff(psn, Psn.add(qp.completer.lastAckedPsn, 1)) >= WINDOW;
    }

    private void start(SendWqe w) {
        w.started = true;
        w.sent = false;
        w.firstPsn = psn;
        int mtu = qp.mtu;
        int packets = (int) Math.max(1, (w.totalLength + mtu - 1) / mtu);
        if (w.opcode.isAtomic()) {
            packets = 1;
        }
        w.lastPsn = Psn.add(psn, packets - 1);
        w.nextPsn = psn;
        w.respPsn = psn;
        w.sendOffset = 0;
        if (w.isReadOrAtomic()) {
            outstandingRdAtomic++;
        }
    }

    /** Builds and sends the next packet of {@code w}; false on a local protection error. */
    private boolean sendOne(SendWqe w) {
        Packet p = qp.hca.packets.acquire();
        MemorySegment b = p.buffer;
        int mtu = qp.mtu;
        int op;
        boolean last;
        int payload = 0;
        WrOpcode wop = w.opcode;
        if (wop.isSend() || wop.isWrite()) {
            long remaining = w.totalLength - w.sendOffset;
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
                reth.wrap(b, Opcode.offsetOf(op, Opcode.HEADER_RETH)).virtualAddress(w.remoteAddr).rkey(w.rkey)
                        .dmaLength((int) w.totalLength);
            }
            if (Opcode.hasImmDt(op)) {
                immDt.wrap(b, Opcode.offsetOf(op, Opcode.HEADER_IMM_DT)).immediate(w.imm);
            }
            if (Opcode.hasIeth(op)) {
                ieth.wrap(b, Opcode.offsetOf(op, Opcode.HEADER_IETH)).rkey(w.invRkey);
            }
            p.headerLength = Opcode.headerLength(op);
            if (!gather(w, p, w.sendOffset, payload)) {
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
            long offset = (long) Psn.diff(w.nextPsn, w.firstPsn) * mtu;
            header(b, op, false, 0, true, w.nextPsn, w);
            reth.wrap(b, Opcode.offsetOf(op, Opcode.HEADER_RETH)).virtualAddress(w.remoteAddr + offset).rkey(w.rkey)
                    .dmaLength((int) (w.totalLength - offset));
            p.headerLength = Opcode.headerLength(op);
            w.sent = true;
            psn = Psn.add(w.lastPsn, 1);
        } else {
            boolean cas = wop == WrOpcode.ATOMIC_CMP_AND_SWP;
            op = cas ? Opcode.RC_COMPARE_SWAP : Opcode.RC_FETCH_ADD;
            header(b, op, false, 0, true, w.firstPsn, w);
            atomicEth.wrap(b, Opcode.offsetOf(op, Opcode.HEADER_ATOMIC_ETH)).virtualAddress(w.remoteAddr)
                    .rkey(w.rkey).swapAdd(cas ? w.swap : w.compareAdd).compare(cas ? w.compareAdd : 0);
            p.headerLength = Opcode.headerLength(op);
            w.sent = true;
            psn = Psn.add(w.firstPsn, 1);
        }
        if (qp.type == org.rdma4j.verbs.QpType.UD) {
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
        if (QpEngine.DEBUG) {
            qp.trace("send " + Opcode.name(op) + " psn " + Integer.toHexString(Wire.psn(b)));
        }
        qp.hca.send(p);
        return true;
    }

    private void header(MemorySegment b, int op, boolean se, int payload, boolean last, int packetPsn, SendWqe w) {
        boolean ackReq = false;
        if (qp.transport == Opcode.TRANSPORT_RC) {
            if (last || ++sinceAckReq >= ACK_EVERY) {
                ackReq = true;
                sinceAckReq = 0;
            }
        }
        boolean ud = qp.transport == Opcode.TRANSPORT_UD;
        bth.wrap(b, 0).write(op, se, (4 - (payload & 3)) & 3, qp.pkey, ud ? w.remoteQpn : qp.destQpn, ackReq,
                packetPsn);
        if (ud) {
            // A Q_Key with the high bit set means "use the QP's own Q_Key" (IBTA 10.2.5).
            int qkey = w.remoteQkey < 0 ? qp.qkey : w.remoteQkey;
            deth.wrap(b, Opcode.offsetOf(op, Opcode.HEADER_DETH)).qkey(qkey).srcQpn(qp.qpn);
        }
    }

    /** Adds the payload bytes [offset, offset + len) of {@code w} to {@code p}; false on a bad lkey. */
    private boolean gather(SendWqe w, Packet p, long offset, int len) {
        if (len == 0) {
            return true;
        }
        if (w.isInline) {
            p.addPiece(w.inlineData, offset, len);
            return true;
        }
        long skip = offset;
        int left = len;
        for (int i = 0; i < w.numSge && left > 0; i++) {
            long l = Integer.toUnsignedLong(w.length[i]);
            if (skip >= l) {
                skip -= l;
                continue;
            }
            int n = (int) Math.min(l - skip, left);
            MemKey k = qp.hca.keys.lookup(w.lkey[i]);
            long at = w.addr[i] + skip;
            if (k == null || !k.valid || k.isWindow() || k.pd != qp.pd || !k.covers(at, n) || !k.alive()) {
                return false;
            }
            p.addPiece(k.segment, k.offsetOf(at), n);
            left -= n;
            skip = 0;
        }
        return left == 0;
    }

    /** BIND_MW and LOCAL_INV; returns the completion status. */
    private WcStatus executeLocal(SendWqe w) {
        if (w.opcode == WrOpcode.LOCAL_INV) {
            MemKey k = qp.hca.keys.lookup(w.invRkey);
            if (k == null || k.pd != qp.pd || k.kind != MemKey.MW_TYPE2) {
                return WcStatus.LOC_QP_OP_ERR; // as rxe: type-1 windows and reg_mr MRs cannot be invalidated
            }
            Invalidate.apply(k);
            return WcStatus.SUCCESS;
        }
        MemKey mw = w.mw;
        MemKey mr = w.bindMr;
        if (mw == null || mw.pd != qp.pd) {
            return WcStatus.MW_BIND_ERR;
        }
        if ((w.bindAccess & ~Access.ALL) != 0) {
            return WcStatus.MW_BIND_ERR; // unknown access bits (rxe: EOPNOTSUPP, completed as a bind error)
        }
        boolean zeroBased = (w.bindAccess & Access.ZERO_BASED) != 0;
        if (mw.kind == MemKey.MW_TYPE1 && zeroBased) {
            return WcStatus.MW_BIND_ERR; // o10-36.2.2: type 1 windows are VA-based
        }
        if (mw.kind == MemKey.MW_TYPE2) {
            if (((w.bindRkey ^ mw.key) & 0xFFFFFF00) != 0) {
                return WcStatus.MW_BIND_ERR; // a type-2 rkey keeps the window's index, only the variant changes
            }
            // o10-37.2.30: only a free (never bound or invalidated) type-2 window may be bound;
            // o10-37.2.40: it is freed by invalidation, not by a zero-length bind
            if (mw.valid || w.bindLength == 0) {
                return WcStatus.MW_BIND_ERR;
            }
        }
        if (w.bindLength != 0) {
            if (mr == null || !mr.valid || mr.isWindow() || mr.pd != qp.pd || (mr.access & Access.MW_BIND) == 0
                    || !mr.covers(w.bindAddr, w.bindLength)) {
                return WcStatus.MW_BIND_ERR;
            }
            int remoteWriteLike = Access.REMOTE_WRITE | Access.REMOTE_ATOMIC;
            if ((w.bindAccess & remoteWriteLike) != 0 && (mr.access & Access.LOCAL_WRITE) == 0) {
                return WcStatus.MW_BIND_ERR;
            }
        }
        mw.valid = false;
        MemKey old = mw.boundMr;
        if (old != null) {
            old.boundWindows.decrementAndGet();
            mw.boundMr = null;
        }
        mw.key = w.bindRkey;
        if (w.bindLength != 0) {
            mw.segment = mr.segment;
            // a zero-based (type-2) window's address 0 is the bind address in the MR
            mw.base = zeroBased ? mr.base - w.bindAddr : mr.base;
            mw.start = zeroBased ? 0 : w.bindAddr;
            mw.length = w.bindLength;
            mw.access = w.bindAccess;
            mw.boundMr = mr;
            mw.boundQp = mw.kind == MemKey.MW_TYPE2 ? qp : null;
            mr.boundWindows.incrementAndGet();
            mw.valid = true;
        }
        return WcStatus.SUCCESS;
    }

    /**
     * Goes back to PSN {@code toPsn} (retransmission after a timeout, a NAK or an RNR wait): the
     * work request containing it resends from there, later ones start over. False if no outstanding
     * request contains {@code toPsn}.
     */
    boolean rewind(int toPsn) {
        long end = Math.min(qp.sqCursor + 1, qp.sqHead);
        long found = -1;
        for (long i = qp.sqTail; i < end; i++) {
            SendWqe w = qp.wqe(i);
            if (!w.started) {
                break;
            }
            if (w.done || w.opcode.isLocal()) {
                continue;
            }
            if (Psn.compare(toPsn, w.firstPsn) >= 0 && Psn.compare(toPsn, w.lastPsn) <= 0) {
                found = i;
                break;
            }
        }
        if (found < 0) {
            return false;
        }
        SendWqe w = qp.wqe(found);
        if (w.opcode.isAtomic()) {
            toPsn = w.firstPsn;
        } else if (w.opcode == WrOpcode.RDMA_READ) {
            w.respPsn = toPsn;
        } else {
            w.sendOffset = (long) Psn.diff(toPsn, w.firstPsn) * qp.mtu;
        }
        w.nextPsn = toPsn;
        w.sent = false;
        long oldCursor = qp.sqCursor;
        for (long j = found + 1; j <= oldCursor && j < qp.sqHead; j++) {
            SendWqe later = qp.wqe(j);
            if (!later.done) {
                later.started = false;
                later.sent = false;
            }
        }
        qp.sqCursor = found;
        psn = toPsn;
        sinceAckReq = 0;
        // READs and atomics hold responder resources until retired, finished or not.
        int n = 0;
        for (long i = qp.sqTail; i <= oldCursor && i < qp.sqHead; i++) {
            SendWqe x = qp.wqe(i);
            if (x.started && x.isReadOrAtomic()) {
                n++;
            }
        }
        outstandingRdAtomic = n;
        qp.hca.counters.inc(Counter.RETRANSMITS);
        qp.trace("rewind to " + Integer.toHexString(toPsn));
        return true;
    }
}
