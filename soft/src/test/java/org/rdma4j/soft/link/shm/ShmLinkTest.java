// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.link.PacketSink;
import org.rdma4j.soft.link.udp.UdpLink;
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

    @Test
    void autoFallsBackToUdpForALocalPeerWithoutARing() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.19");
        InetAddress b = InetAddress.getByName("127.0.0.20");
        int port = SoftDevices.freeUdpPort(34791, a, b);
        Collect sinkB = new Collect();
        try (ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.AUTO, new Collect());
             UdpLink lb = UdpLink.open(b, port, UdpLink.Mode.AUTO, sinkB)) {
            assertTrue(java.nio.file.Files.exists(la.ringFile()));
            la.send(sendOnlyPacket(new PacketPool(), Gid.of(a), Gid.of(b), new byte[] {42}));
            byte[] got = sinkB.got.poll(10, TimeUnit.SECONDS);
            assertTrue(got != null && got.length == 1 && got[0] == 42, () -> "counters " + la.counters());
            assertEquals(0, la.shmSentPackets());
            assertEquals(1, la.udp().sentDatagrams());
        }
    }

    /**
     * While a thread polls the link the receive agent stands by and the poller looks at the UDP socket
     * only now and then: ring and UDP packets still arrive, and once the poller stops the agent
     * receives again (each wait bounded).
     */
    @Test
    void ringAndUdpPacketsArriveWhileAThreadPollsAndAfterItStops() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.23");
        InetAddress b = InetAddress.getByName("127.0.0.24");
        InetAddress c = InetAddress.getByName("127.0.0.25");
        int port = SoftDevices.freeUdpPort(34991, a, b, c);
        Collect sinkB = new Collect();
        try (ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, new Collect());
             ShmLink lb = ShmLink.open(b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sinkB);
             UdpLink lc = UdpLink.open(c, port, UdpLink.Mode.AUTO, new Collect())) {
            PacketPool pool = new PacketPool();
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicLong polled = new java.util.concurrent.atomic.AtomicLong();
            Thread poller = Thread.ofPlatform().name("poller").start(() -> {
                while (!stop.get()) {
                    polled.addAndGet(lb.poll());
                }
            });
            int sent = 0;
            try {
                for (int i = 0; i < 50; i++) {
                    la.send(sendOnlyPacket(pool, Gid.of(a), Gid.of(b), new byte[] {(byte) i}));
                    sent++;
                    lc.send(sendOnlyPacket(pool, Gid.of(c), Gid.of(b), new byte[] {(byte) (100 + i)}));
                    for (int k = 0; k < 2; k++) {
                        byte[] got = sinkB.got.poll(10, TimeUnit.SECONDS);
                        assertTrue(got != null, () -> "packet lost while polling; counters " + lb.counters());
                    }
                }
                // On a loaded machine the poller or the agent may not have been on a CPU at the same
                // time yet: more ring packets, until the agent has found the poller at work (bounded).
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (lb.counters().get("shm_agent_standbys") == 0 && System.nanoTime() - deadline < 0) {
                    la.send(sendOnlyPacket(pool, Gid.of(a), Gid.of(b), new byte[] {(byte) sent}));
                    sent++;
                    assertTrue(sinkB.got.poll(10, TimeUnit.SECONDS) != null,
                            () -> "packet lost while polling; counters " + lb.counters());
                    Thread.sleep(1);
                }
            } finally {
                stop.set(true);
                poller.join(10_000);
            }
            assertEquals(sent, la.shmSentPackets());
            assertEquals(sent, lb.shmReceivedPackets());
            assertTrue(lb.counters().get("shm_agent_standbys") > 0, () -> "the agent never stood by: " + lb.counters());
            Thread.sleep(5); // longer than the stand-by window: the agent takes over
            long before = polled.get();
            la.send(sendOnlyPacket(pool, Gid.of(a), Gid.of(b), new byte[] {77}));
            byte[] got = sinkB.got.poll(10, TimeUnit.SECONDS);
            assertTrue(got != null && got[0] == 77, () -> "the agent did not take over; counters " + lb.counters());
            assertEquals(before, polled.get());
        }
    }

    @Test
    void anIdleReceiveAgentSleepsAndAPacketWakesIt() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.27");
        InetAddress b = InetAddress.getByName("127.0.0.28");
        int port = SoftDevices.freeUdpPort(35191, a, b);
        Collect sinkB = new Collect();
        try (ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, new Collect());
             ShmLink lb = ShmLink.open(b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sinkB)) {
            if (ShmLink.USE_FUTEX) {
                try (ShmRing ring = ShmRing.open(lb.ringFile())) {
                    assertEquals(ShmRing.FLAG_FUTEX, ring.flags() & ShmRing.FLAG_FUTEX, "the ring says how to wake");
                }
            }
            PacketPool pool = new PacketPool();
            for (int i = 0; i < 20; i++) {
                Thread.sleep(5); // far past the agent's spin: it sleeps (or is about to), and must be woken
                la.send(sendOnlyPacket(pool, Gid.of(a), Gid.of(b), new byte[] {(byte) i}));
                byte[] got = sinkB.got.poll(10, TimeUnit.SECONDS);
                assertTrue(got != null && got[0] == i, () -> "not delivered; counters " + la.counters() + " / " + lb.counters());
            }
            // at least one packet found the agent asleep and woke it, rather than waiting for its timeout
            assertTrue(la.counters().get("shm_doorbells") > 0, () -> "no wake-up sent: " + la.counters());
            if (ShmLink.USE_FUTEX) {
                assertTrue(lb.counters().get("shm_agent_wakeups") > 0, () -> "no futex wake-up: " + lb.counters());
            }
        }
    }

    @Test
    void aSenderWakesAReceiverWithoutTheFutexFlagByADoorbellDatagram() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.29");
        InetAddress b = InetAddress.getByName("127.0.0.30");
        int port = SoftDevices.freeUdpPort(35291, a, b);
        try (java.nio.channels.DatagramChannel bell = java.nio.channels.DatagramChannel.open(
                     java.net.StandardProtocolFamily.INET)
                     .bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             ShmRing ring = ShmRing.create(ShmLink.fileFor(Gid.of(b), port),
                     new ShmRing.Identity(ProcessHandle.current().pid(),
                             ShmRing.processStartMs(ProcessHandle.current()), Gid.of(b).bytes(), port),
                     ((java.net.InetSocketAddress) bell.getLocalAddress()).getPort(), 2, 8, 0);
             ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, new Collect())) {
            ShmRingTest.Recorder r = new ShmRingTest.Recorder();
            ring.consume(r, 1);
            assertTrue(ring.prepareToSleep(), "an empty ring: the consumer may sleep");
            la.send(sendOnlyPacket(new PacketPool(), Gid.of(a), Gid.of(b), new byte[] {5}));
            bell.configureBlocking(true);
            java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(16);
            java.util.concurrent.Future<?> rang = java.util.concurrent.CompletableFuture.runAsync(() -> {
                try {
                    bell.receive(buf);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            rang.get(10, TimeUnit.SECONDS); // the datagram came: no futex wake-up for a ring without the flag
            assertEquals(1, la.counters().get("shm_doorbells"));
            assertEquals(1, ring.consume(r, 10));
            assertEquals(1, r.packets.size());
        }
    }

    @Test
    void shmDropsAndCountsWhatHasNoRingInsteadOfFallingBack() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.21");
        InetAddress b = InetAddress.getByName("127.0.0.22");
        int port = SoftDevices.freeUdpPort(34891, a, b);
        try (ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, new Collect())) {
            la.send(sendOnlyPacket(new PacketPool(), Gid.of(a), Gid.of(b), new byte[] {1}));
            assertEquals(1, la.counters().get("shm_no_ring_drops"));
            assertEquals(0, la.udp().sentDatagrams());
        }
    }

    @Test
    void theDeviceSpecChoosesTheLink() throws Exception {
        org.rdma4j.verbs.VerbsException e = org.junit.jupiter.api.Assertions.assertThrows(
                org.rdma4j.verbs.VerbsException.class,
                () -> org.rdma4j.verbs.Verbs.createDevice("soft:udp?addr=127.0.0.23&port=34991&link=tcp"));
        assertTrue(e.getMessage().contains("link=tcp"), e::getMessage);
        int port = SoftDevices.freeUdpPort(34991, InetAddress.getByName("127.0.0.23"));
        org.rdma4j.verbs.Device shm = org.rdma4j.verbs.Verbs.createDevice(
                "soft:udp?addr=127.0.0.23&port=" + port + "&link=shm");
        java.nio.file.Path ring = ShmLink.fileFor(Gid.of(InetAddress.getByName("127.0.0.23")), port);
        try {
            assertTrue(java.nio.file.Files.exists(ring), "link=shm makes the ring file");
        } finally {
            org.rdma4j.verbs.Verbs.removeDevice(shm);
        }
        assertTrue(!java.nio.file.Files.exists(ring), "removing the device removes it");
        org.rdma4j.verbs.Device udp = org.rdma4j.verbs.Verbs.createDevice(
                "soft:udp?addr=127.0.0.23&port=" + port + "&link=udp");
        try {
            assertTrue(!java.nio.file.Files.exists(ring), "link=udp makes none");
        } finally {
            org.rdma4j.verbs.Verbs.removeDevice(udp);
        }
    }

    /** Counts and releases: allocates nothing itself. */
    static final class Count implements PacketSink {
        final java.util.concurrent.atomic.AtomicLong n = new java.util.concurrent.atomic.AtomicLong();

        @Override
        public void receive(Packet p) {
            n.incrementAndGet();
            p.release();
        }
    }

    @Test
    void sendingAndReceivingThroughTheRingAllocatesNothingPerPacket() throws Exception {
        var threads = java.lang.management.ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(threads instanceof com.sun.management.ThreadMXBean,
                "needs per-thread allocation counters");
        var counters = (com.sun.management.ThreadMXBean) threads;
        InetAddress a = InetAddress.getByName("127.0.0.25");
        InetAddress b = InetAddress.getByName("127.0.0.26");
        int port = SoftDevices.freeUdpPort(35091, a, b);
        Count sinkB = new Count();
        try (ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, new Count());
             ShmLink lb = ShmLink.open(b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sinkB)) {
            PacketPool pool = new PacketPool();
            Gid ga = Gid.of(a);
            Gid gb = Gid.of(b);
            byte[] payload = new byte[1000];
            int warm = 30_000;
            int measured = 20_000;
            sendAll(la, pool, ga, gb, payload, warm, sinkB, 0);
            Thread agent = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("rdma4j-shm-" + b.getHostAddress() + "-" + port)).findFirst()
                    .orElseThrow();
            // Up to 5 measured rounds, the first under the bound passes: code still interpreted allocates
            // (a futex downcall ~200 B a call before it is compiled; the agent may sleep between most
            // packets, and under load the JIT comes late), steady state must not. One object per packet
            // would be at least 320 KB in every round.
            long sender = 0;
            long receiver = 0;
            long already = warm;
            for (int round = 0; round < 5; round++) {
                long agentBefore = counters.getThreadAllocatedBytes(agent.threadId());
                long wakeupsBefore = lb.counters().get("shm_agent_wakeups") + lb.counters().get("shm_agent_standbys");
                long senderBefore = counters.getCurrentThreadAllocatedBytes();
                send(la, pool, ga, gb, payload, measured);
                // the sender's count stops before the wait for arrival: Thread.sleep may allocate (JFR)
                sender = counters.getCurrentThreadAllocatedBytes() - senderBefore;
                awaitArrival(la, measured, sinkB, already);
                already += measured;
                receiver = counters.getThreadAllocatedBytes(agent.threadId()) - agentBefore;
                long sleeps = lb.counters().get("shm_agent_wakeups") + lb.counters().get("shm_agent_standbys") - wakeupsBefore;
                System.out.printf("shm allocation for %d packets (round %d): sender %d B, receive agent %d B, sleeps %d%n",
                        measured, round, sender, receiver, sleeps);
                if (sender < 128 * 1024 && receiver < 128 * 1024) {
                    break;
                }
            }
            long s = sender;
            long r = receiver;
            // the receive agent's once-a-second look for dead senders (ProcessHandle) may fall in the window,
            // and so may a sender's liveness check of the receiver when a lane stays full (ProcessHandle):
            // 20-40 KB seen under load.
            assertTrue(s < 128 * 1024 && r < 128 * 1024, () -> "allocated: sender " + s + " B, receive agent "
                    + r + " B for " + measured + " packets in each of 5 rounds; " + lb.counters());
            assertEquals(0, lb.counters().get("shm_malformed_drops") + lb.counters().get("shm_icrc_drops"));
        }
    }

    private static void sendAll(ShmLink from, PacketPool pool, Gid src, Gid dst, byte[] payload, int n, Count sink,
                                long already) throws InterruptedException {
        send(from, pool, src, dst, payload, n);
        awaitArrival(from, n, sink, already);
    }

    private static void send(ShmLink from, PacketPool pool, Gid src, Gid dst, byte[] payload, int n) {
        for (int i = 0; i < n; i++) {
            Packet p = pool.acquire();
            Bth.writeAt(p.buffer, 0, Opcode.RC_SEND_ONLY, false, 0, 0xFFFF, 0x11, false, i);
            p.headerLength = Opcode.headerLength(Opcode.RC_SEND_ONLY);
            p.setFlatPayload(payload.length);
            p.srcGid = src;
            p.dstGid = dst;
            from.send(p);
        }
    }

    private static void awaitArrival(ShmLink from, int n, Count sink, long already) throws InterruptedException {
        long end = System.nanoTime() + 30_000_000_000L;
        while (sink.n.get() < already + n - from.fullDrops() && System.nanoTime() < end) {
            Thread.sleep(1);
        }
        assertEquals(already + n, sink.n.get() + from.fullDrops(), "every packet arrived or was counted full");
    }

    static Packet headerOnly(PacketPool pool, int opcode, Gid src, Gid dst) {
        Packet p = pool.acquire();
        Bth.writeAt(p.buffer, 0, opcode, false, 0, 0xFFFF, 0x11, false, 5);
        p.headerLength = Opcode.headerLength(opcode);
        p.buffer.asSlice(Bth.LENGTH, p.headerLength - Bth.LENGTH).fill((byte) 0);
        p.setFlatPayload(0);
        p.srcGid = src;
        p.dstGid = dst;
        return p;
    }

    @Test
    void aResponseToADeviceWhoseThreadPollsLeavesItsAgentAsleepAndStillArrives() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.45");
        InetAddress b = InetAddress.getByName("127.0.0.46");
        int port = SoftDevices.freeUdpPort(35791, a, b);
        Collect sinkA = new Collect();
        Collect sinkB = new Collect();
        try (ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sinkA);
             ShmLink lb = ShmLink.open(b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sinkB)) {
            PacketPool pool = new PacketPool();
            Gid ga = Gid.of(a);
            Gid gb = Gid.of(b);
            lb.send(headerOnly(pool, Opcode.RC_ACKNOWLEDGE, gb, ga)); // nobody polls A: woken as ever
            assertTrue(sinkA.got.poll(10, TimeUnit.SECONDS) != null, () -> "no ACK: " + lb.counters());
            assertEquals(0, lb.counters().get("shm_responses_unwoken"));

            // a thread of A polls: B's responses leave A's agent asleep. "Polls" means within the last
            // 50 us, which a first, interpreted, run of this code may take longer than: try a few times
            int sent = 0;
            while (lb.counters().get("shm_responses_unwoken") == 0 && sent < 200) {
                la.poll();
                lb.send(headerOnly(pool, Opcode.RC_ACKNOWLEDGE, gb, ga));
                sent++;
            }
            long unwoken = lb.counters().get("shm_responses_unwoken");
            assertEquals(1, unwoken, () -> "" + lb.counters());
            // the poller never looks again: the standing-by agent takes the rest after its short sleep
            for (int i = 0; i < sent; i++) {
                int n = i;
                assertTrue(sinkA.got.poll(10, TimeUnit.SECONDS) != null, () -> "ACK " + n + " never arrived: "
                        + la.counters());
            }

            la.poll();
            lb.send(sendOnlyPacket(pool, gb, ga, new byte[] {1, 2, 3, 4})); // a request always wakes
            assertEquals(unwoken, lb.counters().get("shm_responses_unwoken"));
            assertTrue(sinkA.got.poll(10, TimeUnit.SECONDS) != null);

            la.poll();
            la.pollerBlocks(); // the poller goes to block on a channel: senders wake the agent again
            lb.send(headerOnly(pool, Opcode.RC_ACKNOWLEDGE, gb, ga));
            assertEquals(unwoken, lb.counters().get("shm_responses_unwoken"));
            assertTrue(sinkA.got.poll(10, TimeUnit.SECONDS) != null);
        }
    }
}
