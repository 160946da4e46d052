package org.rdma4j.soft.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.Gid;

/** Two ShmLinks in one JVM: what one sends arrives at the other through its ring, checked as a datagram. */
class ShmLinkTest {
    /** A sink that keeps what it gets (copies of the payload bytes) for the test thread. */
    static final class Collect implements PacketSink {
        final LinkedBlockingQueue<byte[]> got = new LinkedBlockingQueue<>();
        volatile Gid lastSource;

        @Override
        public void receive(Packet p) {
            byte[] b = new byte[p.payloadLength];
            p.copyPayload(0, java.lang.foreign.MemorySegment.ofArray(b), 0, b.length);
            lastSource = p.srcGid;
            got.add(b);
            p.release();
        }
    }

    static Packet sendOnlyPacket(PacketPool pool, Gid src, Gid dst, byte[] payload) {
        Packet p = pool.acquire();
        new Bth().wrap(p.buffer, 0).clear().opcode(Opcode.RC_SEND_ONLY).destQpn(0x11).psn(1).pkey(0xFFFF)
                .padCount((4 - (payload.length & 3)) & 3);
        p.headerLength = Opcode.headerLength(Opcode.RC_SEND_ONLY);
        MemorySegmentCopy.copy(payload, p);
        p.srcGid = src;
        p.dstGid = dst;
        return p;
    }

    static final class MemorySegmentCopy {
        static void copy(byte[] payload, Packet p) {
            java.lang.foreign.MemorySegment.copy(payload, 0, p.buffer, ValueLayout.JAVA_BYTE, p.headerLength,
                    payload.length);
            p.setFlatPayload(payload.length);
        }
    }

    @Test
    void aPacketToALocalPeerGoesThroughItsRingAndArrivesIntact() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.13");
        InetAddress b = InetAddress.getByName("127.0.0.14");
        int port = SoftDevices.freeUdpPort(32791, a, b);
        Collect sinkA = new Collect();
        Collect sinkB = new Collect();
        try (ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sinkA);
             ShmLink lb = ShmLink.open(b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sinkB)) {
            PacketPool pool = new PacketPool();
            byte[] payload = {1, 2, 3, 4, 5, 6, 7, 8, 9};
            la.send(sendOnlyPacket(pool, Gid.of(a), Gid.of(b), payload));
            byte[] got = sinkB.got.poll(10, TimeUnit.SECONDS);
            assertTrue(got != null, () -> "nothing arrived; counters " + la.counters() + " / " + lb.counters());
            assertEquals(java.util.Arrays.toString(payload), java.util.Arrays.toString(got));
            assertEquals(Gid.of(a), sinkB.lastSource);
            assertEquals(1, la.shmSentPackets());
            assertEquals(0, la.udp().sentDatagrams());
        }
    }
}
