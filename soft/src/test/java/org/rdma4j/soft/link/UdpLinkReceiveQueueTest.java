package org.rdma4j.soft.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;

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
            new Bth().wrap(java.lang.foreign.MemorySegment.ofBuffer(b), 0)
                    .write(Opcode.UD_SEND_ONLY, false, 0, 0xFFFF, 0x11, false, 0);
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
        }
    }
}
