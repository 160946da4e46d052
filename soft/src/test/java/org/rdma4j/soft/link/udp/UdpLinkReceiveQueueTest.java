// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.link.PacketSink;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Ipv4Header;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.UdpHeader;

/**
 * The UDP link's socket receive queue: it asks for a large buffer (past net.core.rmem_max where the
 * process may), and when the kernel still drops datagrams because the queue is full, the drops are
 * counted (SO_RXQ_OVFL) and shown with the device's counters, since the transport above then
 * recovers them only by timeouts.
 */
class UdpLinkReceiveQueueTest {

    @Test
    void aFullReceiveQueueIsCountedNotHidden() throws Exception {
        Assumptions.assumeTrue(LinuxSockets.isAvailable(), "libc sockets");
        InetAddress local = InetAddress.getByName("127.0.0.1");
        int port = SoftDevices.freeUdpPort(26411, local);
        CountDownLatch release = new CountDownLatch(1);
        AtomicLong delivered = new AtomicLong();
        PacketSink stalled = new PacketSink() {
            @Override
            public void receive(Packet p) {
                delivered.incrementAndGet();
                p.release();
            }

            @Override
            public void receiveInBatch(Packet p) {
                try {
                    release.await(); // a receive thread that cannot keep up
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                receive(p);
            }
        };
        try (UdpLink link = UdpLink.open(local, port, UdpLink.Mode.NATIVE, stalled);
             DatagramChannel sender = DatagramChannel.open()) {
            assertTrue(link.receiveBufferBytes() > 0, "the kernel reports the receive buffer");
            // Enough well-formed 1 KiB datagrams to overflow even a forced buffer (the kernel charges
            // each its whole skb, well over its length).
            int datagrams = Math.max(20_000, 4 * link.receiveBufferBytes() / 1024);
            ByteBuffer b = ByteBuffer.allocateDirect(1024 + 16);
            MemorySegment bytes = MemorySegment.ofBuffer(b);
            new Bth().wrap(bytes, 0).write(Opcode.UD_SEND_ONLY, false, 0, 0xFFFF, 0x11, false, 0);
            // Sealed with the ICRC a RoCE sender at this address would compute, so the link hands them on.
            sender.bind(new InetSocketAddress(local, 0));
            int from = 0x7F000001;
            MemorySegment pseudo = MemorySegment.ofArray(new byte[Ipv4Header.LENGTH + UdpHeader.LENGTH]);
            new Ipv4Header().wrap(pseudo, 0).writeUdp(0, Ipv4Header.LENGTH + UdpHeader.LENGTH + b.capacity(), 0, true, 64, from, from);
            new UdpHeader().wrap(pseudo, Ipv4Header.LENGTH).write(((InetSocketAddress) sender.getLocalAddress())
                    .getPort(), port, UdpHeader.LENGTH + b.capacity(), 0);
            Icrc.write(bytes, b.capacity() - Icrc.LENGTH, new Icrc().compute(pseudo, 0, bytes, 0, b.capacity()));
            InetSocketAddress to = new InetSocketAddress(local, port);
            for (int i = 0; i < datagrams; i++) {
                b.clear();
                sender.send(b, to);
            }
            release.countDown();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            long seen = -1;
            while (System.nanoTime() < end) {
                seen = delivered.get() + link.socketDrops();
                if (seen >= datagrams) {
                    break;
                }
                Thread.sleep(20);
            }
            assertTrue(link.socketDrops() > 0, "drops counted: delivered " + delivered.get() + " of " + datagrams);
            assertEquals(datagrams, delivered.get() + link.socketDrops(),
                    "every datagram was either delivered or counted as dropped");
            assertEquals(link.socketDrops(), (long) link.counters().get("udp_rcvbuf_drops"));
            assertEquals(0L, link.icrcDrops(), "the sealed datagrams pass the IPv4 ICRC check");
        }
    }
}
