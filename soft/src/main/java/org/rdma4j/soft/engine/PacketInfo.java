// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Ieth;
import org.rdma4j.soft.wire.ImmDt;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Reth;

/**
 * One request as the responder takes it in, or one response as the completer does, whichever path
 * brought it (rxe's rxe_pkt_info): the opcode and the BTH's fields, the RETH, immediate data, IETH and
 * AETH where the opcode has them, and where the payload's bytes are. From a link it is decoded from the {@link Packet} ({@link #decode}); on the
 * in-process path the requester fills it from the work request without a packet ({@link #handOver}).
 * {@link Responder#receive(PacketInfo)} checks and executes both alike, and {@link
 * Completer#receive(PacketInfo)} takes an ACK handed over ({@link #positiveAck}) as its packet. Mutable and reused: the
 * requester keeps one for its hand-overs, the responder one for the packets it decodes (and one for
 * the packets a burst is split into). Task only, allocation free.
 */
final class PacketInfo {
    /** {@link #kind} bits: what the responder asks of an opcode, looked up once per request. */
    static final int SEND = 1;
    static final int WRITE = 1 << 1;
    static final int START = 1 << 2;
    static final int END = 1 << 3;
    /** FIRST or MIDDLE: exactly the path MTU of payload. */
    static final int FULL = 1 << 4;
    static final int LAST = 1 << 5;
    static final int IMM = 1 << 6;
    static final int PAYLOAD = 1 << 7;
    private static final int[] KINDS = new int[256];
    private static final int[] TRANSPORTS = new int[256];

    static {
        for (int op = 0; op < 256; op++) {
            TRANSPORTS[op] = -1;
            if (!Opcode.isValid(op)) {
                continue;
            }
            KINDS[op] = (Opcode.isSend(op) ? SEND : 0) | (Opcode.isWrite(op) ? WRITE : 0)
                    | (Opcode.isStart(op) ? START : 0) | (Opcode.isEnd(op) ? END : 0)
                    | (Opcode.isFirst(op) || Opcode.isMiddle(op) ? FULL : 0) | (Opcode.isLast(op) ? LAST : 0)
                    | (Opcode.hasImmDt(op) ? IMM : 0) | (Opcode.hasPayload(op) ? PAYLOAD : 0);
            int t = op >>> 5;
            TRANSPORTS[op] = t == 0 ? Opcode.TRANSPORT_RC : t == 1 ? Opcode.TRANSPORT_UC
                    : t == 3 ? Opcode.TRANSPORT_UD : -1;
        }
    }

    /** The {@link #kind} bits of opcode {@code op} (0 for an opcode that is not defined). */
    static int kindOf(int op) {
        return KINDS[op & 0xFF];
    }

    int opcode;
    /** The opcode's {@link #SEND}, {@link #WRITE}, ... bits, and its transport (-1: none rdma4j has). */
    int kind;
    int transport;
    int psn;
    int pkey;
    boolean ackReq;
    boolean solicited;
    /** The BTH's transport header version (0 is the only one there is). */
    int tver;
    /** The RETH's virtual address, rkey and DMA length (zero when the opcode has no RETH). */
    long va;
    int rkey;
    long dmaLength;
    /** Immediate data, and the rkey a SEND with invalidate names (zero when the opcode has none). */
    int imm;
    int invalidateRkey;
    /** A response's AETH syndrome (zero when the opcode has no AETH). */
    int syndrome;
    int payloadLength;
    /** The packet it came in, or null when handed over; READ and atomic requests always come in one. */
    Packet packet;
    /** Handed over: the payload's bytes at {@link #srcOffset} (null for no payload). */
    MemorySegment src;
    long srcOffset;
    /**
     * How many WRITE packets this stands for (a burst on the in-process fabric, see {@link
     * Packet#burstPackets}), the MTU they were cut at and the last one's opcode; 1 otherwise.
     */
    int count;
    int burstMtu;
    int lastOpcode;
    /** Set by the responder when the sender's memory went away while it copied (nothing advanced). */
    boolean sourceGone;

    /** Decodes the request packet {@code p} of opcode {@code op}; returns this. */
    PacketInfo decode(Packet p, int op) {
        MemorySegment b = p.buffer;
        opcode = op;
        kind = KINDS[op & 0xFF];
        transport = TRANSPORTS[op & 0xFF];
        psn = Bth.psnOf(b);
        pkey = Bth.pkeyOf(b);
        ackReq = Bth.ackReqOf(b);
        solicited = Bth.solicitedEventOf(b);
        tver = Bth.tverOf(b);
        if (Opcode.hasReth(op)) {
            long at = Opcode.offsetOf(op, Opcode.HEADER_RETH);
            va = Reth.virtualAddressAt(b, at);
            rkey = Reth.rkeyAt(b, at);
            dmaLength = Integer.toUnsignedLong(Reth.dmaLengthAt(b, at));
        } else {
            va = 0;
            rkey = 0;
            dmaLength = 0;
        }
        imm = Opcode.hasImmDt(op) ? ImmDt.immediateAt(b, Opcode.offsetOf(op, Opcode.HEADER_IMM_DT)) : 0;
        invalidateRkey = Opcode.hasIeth(op) ? Ieth.rkeyAt(b, Opcode.offsetOf(op, Opcode.HEADER_IETH)) : 0;
        syndrome = Opcode.hasAeth(op) ? Aeth.syndromeAt(b, Opcode.offsetOf(op, Opcode.HEADER_AETH)) : 0;
        payloadLength = p.payloadLength;
        packet = p;
        src = null;
        srcOffset = 0;
        count = p.burstPackets;
        burstMtu = p.burstMtu;
        lastOpcode = p.burstLastOpcode;
        sourceGone = false;
        return this;
    }

    /**
     * Fills this for a one-packet WRITE or SEND handed over on the in-process path: what its packet's
     * headers would say, and its payload of {@code len} bytes at {@code srcOffset} of {@code src}.
     * Returns this.
     */
    PacketInfo handOver(int op, int psn, int pkey, boolean ackReq, boolean solicited, long va, int rkey, int imm,
                        MemorySegment src, long srcOffset, int len) {
        this.opcode = op;
        this.kind = KINDS[op & 0xFF];
        this.transport = TRANSPORTS[op & 0xFF];
        this.psn = psn;
        this.pkey = pkey;
        this.ackReq = ackReq;
        this.solicited = solicited;
        this.tver = 0;
        this.va = va;
        this.rkey = rkey;
        this.dmaLength = Opcode.hasReth(op) ? len : 0;
        this.imm = imm;
        this.invalidateRkey = 0;
        this.syndrome = 0;
        this.payloadLength = len;
        this.packet = null;
        this.src = src;
        this.srcOffset = srcOffset;
        this.count = 1;
        this.burstMtu = 0;
        this.lastOpcode = op;
        this.sourceGone = false;
        return this;
    }

    /** Fills this for a positive ACK of {@code psn} handed over on the in-process path; returns this. */
    PacketInfo positiveAck(int psn) {
        this.opcode = Opcode.RC_ACKNOWLEDGE;
        this.kind = 0;
        this.transport = Opcode.TRANSPORT_RC;
        this.psn = psn;
        this.syndrome = Acknowledger.ACK_SYNDROME;
        this.payloadLength = 0;
        this.packet = null;
        this.src = null;
        this.count = 1;
        return this;
    }

    /** Copies {@code len} payload bytes from payload offset {@code from} into {@code dst} at {@code dstOffset}. */
    void copyPayload(int from, MemorySegment dst, long dstOffset, int len) {
        if (packet != null) {
            packet.copyPayload(from, dst, dstOffset, len);
        } else {
            Packet.copyBytes(src, srcOffset + from, dst, dstOffset, len);
        }
    }

    /** Scatters the payload into the receive WQE {@code recv} at byte {@code offset} ({@link Scatter#intoRecv}). */
    int scatterInto(QpEngine qp, RecvWqe recv, long offset) {
        return Scatter.intoRecv(qp, recv, offset, packet, src, srcOffset, payloadLength);
    }
}
