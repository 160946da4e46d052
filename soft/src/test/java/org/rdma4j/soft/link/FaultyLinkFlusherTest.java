// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link;

import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.agent.NanoClock;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;

/** The faulty link's flusher agent, on a fake clock: a held packet leaves after HOLD_NANOS, not before. */
class FaultyLinkFlusherTest {
    private long nowNs = 5_000_000L;

    @Test
    void aReorderedPacketLeavesOnceItWasHeldLongEnough() {
        List<Packet> out = new ArrayList<>();
        Link inner = new Link() {
            @Override
            public void send(Packet p) {
                out.add(p);
            }
        };
        NanoClock clock = () -> nowNs;
        FaultyLink link = new FaultyLink(inner, new FaultyLink.Faults(0, 0, 1, 0), 1, clock, false);
        Packet p = new PacketPool().acquire();
        new Bth().wrap(p.buffer, 0).write(Opcode.RC_SEND_ONLY, false, 0, 0xFFFF, 0x11, false, 0);
        p.headerLength = Opcode.headerLength(Opcode.RC_SEND_ONLY);
        link.send(p);
        assertEquals(1, link.reordered());
        assertEquals(0, link.flusher().doWork(), "held, not yet due");
        nowNs += FaultyLink.HOLD_NANOS - 1;
        assertEquals(0, link.flusher().doWork());
        assertTrue(out.isEmpty());
        nowNs += 1;
        assertEquals(1, link.flusher().doWork(), "due now");
        assertEquals(List.of(p), out);
        assertEquals(0, link.flusher().doWork(), "nothing left");
        link.close();
    }
}
