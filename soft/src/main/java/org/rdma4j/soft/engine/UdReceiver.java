// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Deth;
import org.rdma4j.soft.wire.ImmDt;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.NetworkHeaderType;
import org.rdma4j.verbs.WcFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * The UD side of the responder: one datagram, one receive WQE. Checks the Q_Key, takes a receive (a
 * datagram that does not fit the QP's next receive is dropped and the receive stays posted, as rxe's
 * class D), writes the GRH area and the payload, and completes. No PSN, no acknowledgement, no
 * message in progress. Runs only inside the QP task.
 */
final class UdReceiver {
    private final QpEngine qp;
    private final RecvWqe recv;
    private final UdGrh grh = new UdGrh();

    UdReceiver(QpEngine qp) {
        this.qp = qp;
        this.recv = new RecvWqe(Math.max(1, qp.rq.maxSge()));
    }

    /** A UD packet whose header, P_Key and length the responder has checked. */
    void receive(Packet p, int op) {
        if (op != Opcode.UD_SEND_ONLY && op != Opcode.UD_SEND_ONLY_WITH_IMMEDIATE) {
            qp.hca.counters.inc(Counter.MALFORMED);
            return;
        }
        int dethAt = Opcode.offsetOf(op, Opcode.HEADER_DETH);
        if (Deth.qkeyAt(p.buffer, dethAt) != qp.qkey) {
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
            if (room < UdGrh.BYTES + len) {
                // As rxe (class D): the datagram is dropped, the receive stays posted for the next one.
                qp.hca.counters.inc(Counter.UD_LENGTH_DROPS);
                return;
            }
        }
        if (!qp.rq.take(recv)) {
            qp.hca.counters.inc(Counter.NO_RECV_DROPS);
            return;
        }
        NetworkHeaderType type = grh.write(p, len);
        int st = Scatter.intoRecv(qp, recv, 0, null, grh.area(), UdGrh.BYTES);
        if (st == Scatter.OK) {
            st = Scatter.intoRecv(qp, recv, UdGrh.BYTES, p, null, len);
        }
        if (st == Scatter.LENGTH) {
            // Only an SRQ receive gets here (it was taken before its size could be seen): it completes
            // in error, and the UD QP carries on.
            qp.hca.counters.inc(Counter.UD_LENGTH_DROPS);
            qp.pushRecvCompletion(recv.wrId, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, 0, 0, 0, 0, false);
            return;
        }
        if (st != Scatter.OK) {
            qp.pushRecvCompletion(recv.wrId, WcStatus.LOC_QP_OP_ERR, WcOpcode.RECV, 0, 0, 0, 0, 0, false);
            qp.enterError();
            return;
        }
        int flags = WcFlag.GRH;
        int imm = 0;
        if (Opcode.hasImmDt(op)) {
            flags |= WcFlag.WITH_IMM;
            imm = ImmDt.immediateAt(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_IMM_DT));
        }
        qp.hca.counters.inc(Counter.RDMA_RECVS);
        qp.pushUdRecvCompletion(recv.wrId, UdGrh.BYTES + len, flags, imm, Deth.srcQpnAt(p.buffer, dethAt),
                Bth.solicitedEventOf(p.buffer),
                type);
    }
}
