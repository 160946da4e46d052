// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Psn;
import org.rdma4j.soft.wire.Reth;

/**
 * A burst the responder cannot take whole ({@link Packet#burstPackets}) taken in as the packets it
 * stands for, one after the other, each through {@link Responder#receive(PacketInfo)}: the same
 * headers the requester would have written for each (PSN, opcode, RETH on the first of a message,
 * SE and AckReq on the last) and the matching slice of the payload. Task only.
 */
final class BurstSplit {
    private BurstSplit() {
    }

    static void split(QpEngine qp, Responder responder, PacketInfo in, PacketInfo scratch) {
        int op = in.opcode;
        if (!Opcode.isWrite(op) || in.packet == null) {
            qp.hca.counters.inc(Counter.MALFORMED); // only WRITEs travel in bursts
            return;
        }
        Packet p = in.packet;
        MemorySegment b = p.buffer;
        int k = in.count;
        int mtu = in.burstMtu;
        int lastOpcode = in.lastOpcode;
        int psn = in.psn;
        boolean se = in.solicited;
        boolean ackReq = in.ackReq;
        int pkey = in.pkey;
        int destQpn = Bth.destQpnOf(b);
        int middle = Opcode.writeOpcode(Opcode.transport(op), Opcode.MIDDLE, false);
        int at = 0;
        for (int i = 0; i < k; i++) {
            boolean lastOne = i == k - 1;
            int subOp = i == 0 ? op : lastOne ? lastOpcode : middle;
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
                responder.receive(scratch.decode(sub, subOp));
            } finally {
                sub.release();
            }
            at += len;
        }
    }
}
