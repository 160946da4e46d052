// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
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
 * {@link UdpLink#poll()}: a thread polling the link receives on its own thread, without the receive
 * agent; pollers and the agent together deliver every datagram exactly once, in the order the socket
 * queued it, one receiver at a time; the agent receives again once polling stops; poll never blocks,
 * and after close it receives nothing. Datagrams come from a plain UDP socket, sealed with the ICRC a
 * RoCE sender at that address computes, each carrying its sequence number as its PSN.
 */
class UdpLinkPollTest {
    private static final long WAIT_NANOS = 10_000_000_000L;

    /** Records what the link hands to the device, and on which thread. */
    private static final class Recorder implements PacketSink {
        final AtomicIntegerArray seen;
        final ConcurrentLinkedQueue<String> threads = new ConcurrentLinkedQueue<>();
        final AtomicInteger delivered = new AtomicInteger();
        final AtomicInteger inside = new AtomicInteger();
        final AtomicBoolean overlapped = new AtomicBoolean();
        final AtomicBoolean outOfOrder = new AtomicBoolean();
        volatile int last = -1;

        Recorder(int n) {
            seen = new AtomicIntegerArray(n);
        }

        @Override
        public void receive(Packet p) {
            if (inside.getAndIncrement() != 0) {
                overlapped.set(true); // two receivers at once
            }
            int psn = Bth.psnOf(p.buffer);
            p.release();
            if (psn <= last) {
                outOfOrder.set(true);
            }
            last = psn;
            seen.incrementAndGet(psn);
            String t = Thread.currentThread().getName();
            if (!threads.contains(t)) {
                threads.add(t);
            }
            delivered.incrementAndGet();
            inside.decrementAndGet();
        }
    }

    /** Sends datagrams 0..n-1 to the link (PSN = sequence number). */
    private static final class Sender implements AutoCloseable {
        final DatagramChannel channel = DatagramChannel.open();
        final ByteBuffer b = ByteBuffer.allocateDirect(64);
        final MemorySegment bytes = MemorySegment.ofBuffer(b);
        final MemorySegment pseudo = MemorySegment.ofArray(new byte[Ipv4Header.LENGTH + UdpHeader.LENGTH]);
        final InetSocketAddress to;
        final int fromPort;

        Sender(InetAddress local, int port) throws Exception {
            channel.bind(new InetSocketAddress(local, 0));
            fromPort = ((InetSocketAddress) channel.getLocalAddress()).getPort();
            to = new InetSocketAddress(local, port);
        }

        void send(int psn) throws Exception {
            new Bth().wrap(bytes, 0).write(Opcode.UD_SEND_ONLY, false, 0, 0xFFFF, 0x11, false, psn);
            int from = 0x7F000001;
            new Ipv4Header().wrap(pseudo, 0).writeUdp(0, Ipv4Header.LENGTH + UdpHeader.LENGTH + b.capacity(), 0,
                    true, 64, from, from);
            new UdpHeader().wrap(pseudo, Ipv4Header.LENGTH).write(fromPort, to.getPort(),
                    UdpHeader.LENGTH + b.capacity(), 0);
            Icrc.write(bytes, b.capacity() - Icrc.LENGTH, new Icrc().compute(pseudo, 0, bytes, 0, b.capacity()));
            b.clear();
            channel.send(b, to);
        }

        @Override
        public void close() throws Exception {
            channel.close();
        }
    }

    private static InetAddress local() throws Exception {
        Assumptions.assumeTrue(LinuxSockets.isAvailable(), "libc sockets");
        return InetAddress.getByName("127.0.0.1");
    }

    @Test
    void pollReceivesOnTheCallingThreadWithoutTheAgent() throws Exception {
        InetAddress local = local();
        int port = SoftDevices.freeUdpPort(26511, local);
        Recorder r = new Recorder(100);
        try (UdpLink link = UdpLink.open(local, port, UdpLink.Mode.NATIVE, r); Sender s = new Sender(local, port)) {
            assertTrue(link.holdReceiveAgent(true), "the agent stands aside");
            for (int i = 0; i < 100; i++) {
                s.send(i);
            }
            long end = System.nanoTime() + WAIT_NANOS;
            while (r.delivered.get() < 100 && System.nanoTime() - end < 0) {
                link.poll();
            }
            assertEquals(100, r.delivered.get(), "every datagram delivered by polling");
            assertEquals(List.of(Thread.currentThread().getName()), List.copyOf(r.threads),
                    "all on the polling thread");
            assertEquals(100L, link.polledPackets());
            assertEquals(0L, link.agentPackets());
            assertEquals(100L, (long) link.counters().get("udp_polled_packets"));
            assertFalse(r.outOfOrder.get(), "in the order sent");
            assertEquals(0, link.poll(), "nothing left: poll returns at once with 0");
        }
    }

    @Test
    void pollersAndTheAgentDeliverEveryDatagramOnceInOrderOneAtATime() throws Exception {
        InetAddress local = local();
        int port = SoftDevices.freeUdpPort(26611, local);
        int n = 20_000;
        Recorder r = new Recorder(n);
        try (UdpLink link = UdpLink.open(local, port, UdpLink.Mode.NATIVE, r); Sender s = new Sender(local, port)) {
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> pollers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int id = t;
                pollers.add(Thread.ofPlatform().name("poller-" + t).start(() -> {
                    int i = 0;
                    while (!stop.get()) {
                        link.poll();
                        if (id == 1 && (++i & 255) == 0) {
                            java.util.concurrent.locks.LockSupport.parkNanos(300_000); // let the agent in
                        }
                    }
                }));
            }
            for (int i = 0; i < n; i++) {
                s.send(i);
                if ((i & 1023) == 0) {
                    Thread.sleep(1); // pauses, in which polling stops now and then
                }
            }
            long end = System.nanoTime() + WAIT_NANOS;
            while (r.delivered.get() + link.socketDrops() < n && System.nanoTime() - end < 0) {
                Thread.sleep(5);
            }
            stop.set(true);
            for (Thread t : pollers) {
                t.join(WAIT_NANOS / 1_000_000);
            }
            assertFalse(r.overlapped.get(), "never two receivers at once");
            assertFalse(r.outOfOrder.get(), "delivered in the order the socket queued them");
            for (int i = 0; i < n; i++) {
                assertTrue(r.seen.get(i) <= 1, "datagram " + i + " delivered " + r.seen.get(i) + " times");
            }
            assertEquals(n, r.delivered.get() + link.socketDrops(), "every datagram delivered or counted dropped");
            assertEquals(r.delivered.get(), link.polledPackets() + link.agentPackets(), "each counted once");
        }
    }

    @Test
    void theAgentReceivesAgainWhenPollingStops() throws Exception {
        InetAddress local = local();
        int port = SoftDevices.freeUdpPort(26711, local);
        Recorder r = new Recorder(10);
        try (UdpLink link = UdpLink.open(local, port, UdpLink.Mode.NATIVE, r); Sender s = new Sender(local, port)) {
            for (int i = 0; i < 1000; i++) {
                link.poll(); // the agent stands by
            }
            s.send(0); // nobody polls any more
            long end = System.nanoTime() + WAIT_NANOS;
            while (r.delivered.get() < 1 && System.nanoTime() - end < 0) {
                Thread.sleep(1);
            }
            assertEquals(1, r.delivered.get(), "delivered without a poll");
            assertEquals(1L, link.agentPackets(), "by the receive agent");
            assertTrue(r.threads.peek().startsWith("rdma4j-udp-"), r.threads::toString);
            // A poller that says it blocks hands the socket back at once (no stand-by wait to show here,
            // only that nothing is lost either way).
            link.poll();
            link.pollerBlocks();
            s.send(1);
            while (r.delivered.get() < 2 && System.nanoTime() - end < 0) {
                Thread.sleep(1);
            }
            assertEquals(2, r.delivered.get());
        }
    }

    @Test
    void pollAfterCloseReceivesNothingAndPollersSurviveTheClose() throws Exception {
        InetAddress local = local();
        int port = SoftDevices.freeUdpPort(26811, local);
        Recorder r = new Recorder(10);
        UdpLink link = UdpLink.open(local, port, UdpLink.Mode.NATIVE, r);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger failures = new AtomicInteger();
        Thread poller = Thread.ofPlatform().start(() -> {
            while (!stop.get()) {
                try {
                    link.poll();
                } catch (RuntimeException e) {
                    failures.incrementAndGet();
                }
            }
        });
        Thread.sleep(20);
        link.close();
        stop.set(true);
        poller.join(WAIT_NANOS / 1_000_000);
        assertEquals(0, failures.get(), "poll during close fails nothing");
        assertEquals(0, link.poll(), "closed: nothing");
    }

    @Test
    void channelModeDoesNotPollItsAgentReceives() throws Exception {
        InetAddress local = InetAddress.getByName("127.0.0.1");
        int port = SoftDevices.freeUdpPort(26911, local);
        Recorder r = new Recorder(10);
        try (UdpLink link = UdpLink.open(local, port, UdpLink.Mode.CHANNEL, r); Sender s = new Sender(local, port)) {
            assertEquals(0, link.poll());
            assertFalse(link.holdReceiveAgent(true), "channel mode has no poll path to hand over to");
            link.holdReceiveAgent(false);
            s.send(0);
            long end = System.nanoTime() + WAIT_NANOS;
            while (r.delivered.get() < 1 && System.nanoTime() - end < 0) {
                link.poll();
                Thread.sleep(1);
            }
            assertEquals(1, r.delivered.get());
            assertEquals(0L, link.polledPackets());
        }
    }
}
