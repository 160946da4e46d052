// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.AtomicAckEth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.verbs.QpState;

/**
 * The responder's packets back to the requester (rxe_resp.c's acknowledge and read_reply): ACKs,
 * NAKs, READ responses and atomic ACKs, each carrying the message sequence number (MSN) this class
 * counts. Positive ACKs are cumulative and so coalesced (see {@link #ack}). Runs only inside the QP
 * task.
 */
final class Acknowledger {
    /** The AETH syndrome of a positive ACK (credits invalid). */
    static final int ACK_SYNDROME = Aeth.ACK_CREDITS_INVALID;

    private final QpEngine qp;
    private int msn;
    /** A positive ACK waits for the end of the task's pass over its inbound packets. */
    private boolean ackPending;
    private int ackPendingPsn;
    /**
     * The PSN of the latest message executed whose last packet asked for no ACK (a requester that
     * coalesces ACKs on the in-process fabric): acknowledged by the next ACK or NAK, or when
     * {@link #owedDeadlineNs} passes, whichever comes first.
     */
    private int owedPsn;
    private volatile long owedDeadlineNs = NEVER;
    private static final long NEVER = Long.MAX_VALUE;
    /** How long an owed ACK waits for a later packet that asks for one, on the in-process fabric. */
    static final long DELAYED_ACK_NS = 100_000;
    /**
     * The same over a link (UDP, shared memory). Longer: there the requester asks for an ACK every
     * quarter window of packets, and an owed ACK that fires first costs a datagram and two wake-ups of
     * the progress agent (armed, then due); at 50k packets/s a quarter window takes 0.6 ms. Still far
     * below the shortest ACK timeout a requester coalesces under (30 ms).
     */
    static final long LINK_DELAYED_ACK_NS = 2_000_000;

    Acknowledger(QpEngine qp) {
        this.qp = qp;
    }

    void reset() {
        ackPending = false;
        owedDeadlineNs = NEVER;
        msn = 0;
    }

    /**
     * A message ended with a packet that asked for no ACK: one is owed. It goes with the next ACK or
     * NAK this QP sends, else {@value #DELAYED_ACK_NS} ns ({@value #LINK_DELAYED_ACK_NS} over a link)
     * from the first owed message (the device's progress agent runs the QP then, see {@link #sendOwed}).
     */
    void owe(int psn) {
        owedPsn = psn;
        if (owedDeadlineNs == NEVER) {
            long d = qp.hca.nanoTime() + qp.path().delayedAckNs();
            owedDeadlineNs = d;
            qp.hca.timerArmed(qp, d);
        }
    }

    /** When the owed ACK is due, or Long.MAX_VALUE. */
    long owedDeadlineNs() {
        return owedDeadlineNs;
    }

    /** Sends the owed ACK if its time has come (the progress agent's run of the task). */
    void sendOwed() {
        if (owedDeadlineNs != NEVER && qp.hca.nanoTime() >= owedDeadlineNs) {
            ack(owedPsn);
            flush();
            owedDeadlineNs = NEVER;
        }
    }

    /** A request message completed (SEND, WRITE, READ or atomic): the MSN advances. */
    void messageDone() {
        msn = Psn.add(msn, 1);
    }

    /**
     * Acknowledges everything up to {@code psn}. The ACK goes out when the QP's task has taken in the
     * packets queued for it ({@link #flush()}), carrying the latest PSN and MSN: a burst of packets
     * with AckReq set (or of duplicates, during a peer's retransmission) costs one ACK instead of one
     * each.
     */
    void ack(int psn) {
        ackPending = true;
        ackPendingPsn = psn;
    }

    /** A NAK (or RNR NAK) goes at once, after any pending ACK. */
    void nak(int syndrome, int psn) {
        flush();
        EngineEvents.nakSent(qp, psn, syndrome);
        send(syndrome, psn);
    }

    /** Sends the coalesced ACK, if one is pending. */
    void flush() {
        if (ackPending) {
            ackPending = false;
            QpState s = qp.state();
            if (s != QpState.ERR && s != QpState.RESET) { // a QP that failed meanwhile answers nothing more
                send(ACK_SYNDROME, ackPendingPsn);
            }
        }
    }

    private void send(int syndrome, int psn) {
        owedDeadlineNs = NEVER; // an ACK or NAK acknowledges every message before it
        if (syndrome == ACK_SYNDROME && qp.transport == Opcode.TRANSPORT_RC && qp.path().ack(psn)) {
            return; // on the in-process fabric, without a packet
        }
        Packet p = responsePacket(Opcode.RC_ACKNOWLEDGE, psn, 0);
        Aeth.writeAt(p.buffer, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE, Opcode.HEADER_AETH), syndrome, msn);
        qp.send(p);
    }

    void atomicAck(int psn, long original) {
        flush();
        owedDeadlineNs = NEVER;
        int op = Opcode.RC_ATOMIC_ACKNOWLEDGE;
        Packet p = responsePacket(op, psn, 0);
        Aeth.writeAt(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_AETH), ACK_SYNDROME, msn);
        AtomicAckEth.writeAt(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_ATOMIC_ACK_ETH), original);
        qp.send(p);
    }

    /**
     * Sends the READ responses for {@code [va, va + length)} of {@code k} from PSN {@code psn};
     * {@code fromStart} is false for a re-request from the middle of a READ, whose responses continue
     * it (MIDDLE.., LAST).
     */
    void readResponses(MemKey k, long va, long length, int psn, boolean fromStart) {
        flush();
        owedDeadlineNs = NEVER;
        int mtu = qp.mtuBytes;
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
                Aeth.writeAt(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_AETH), ACK_SYNDROME, msn);
            }
            if (len > 0) {
                p.addPiece(k.segment, k.offsetOf(va + off), len);
            }
            off += len;
            qp.send(p);
        }
    }

    private Packet responsePacket(int op, int psn, int payload) {
        Packet p = qp.hca.packets.acquire();
        Bth.writeAt(p.buffer, 0, op, false, Bth.padCountFor(payload), qp.pkey, qp.destQpn, false, psn);
        p.headerLength = Opcode.headerLength(op);
        p.srcGid = qp.sgid;
        p.dstGid = qp.dgid;
        p.hopLimit = qp.avHopLimit;
        p.trafficClass = qp.avTrafficClass;
        p.flowLabel = qp.avFlowLabel;
        return p;
    }
}
