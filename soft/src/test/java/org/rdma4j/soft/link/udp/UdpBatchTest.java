// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketAccess;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.link.PacketSink;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.Gid;

/**
 * Batched sends (sendmmsg) and batched receives (recvmmsg) of {@link UdpLink}: a batch puts on the
 * wire exactly the datagrams one send per packet does, in the same order; a mode or kernel without
 * batched sends falls back with a reason; a batch allocates nothing; a malformed datagram inside a
 * receive batch is dropped and counted while the others keep their order.
 */
class UdpBatchTest {
    private static final long WAIT_NANOS = 5_000_000_000L;
    private static final int MTU = 4096;

    /** Packets of a 64 KiB-ish WRITE plus odd sizes (pad bytes), ACK-like empties, a SEND. */
    private static Packet[] packets(PacketPool pool, Gid src, Gid dst, int n, int psnBase) {
        Packet[] ps = new Packet[n];
        for (int i = 0; i < n; i++) {
            Packet p = pool.acquire();
            int op = i == 0 ? Opcode.RC_RDMA_WRITE_FIRST : i == n - 1 ? Opcode.RC_RDMA_WRITE_LAST
                    : i % 5 == 3 ? Opcode.RC_ACKNOWLEDGE : Opcode.RC_RDMA_WRITE_MIDDLE;
            int len = op == Opcode.RC_ACKNOWLEDGE ? 0 : i == n - 1 ? 1 + i * 7 % 13 : MTU;
            Bth.writeAt(p.buffer, 0, op, false, (4 - (len & 3)) & 3, 0xFFFF, 0x11, i == n - 1, psnBase + i);
            p.headerLength = Opcode.headerLength(op);
            for (int j = 12; j < p.headerLength; j++) { // RETH, AETH: defined bytes, whatever the pool left
                p.buffer.set(java.lang.foreign.ValueLayout.JAVA_BYTE, j, (byte) (i + j));
            }
            for (int j = 0; j < len; j++) {
                p.buffer.set(java.lang.foreign.ValueLayout.JAVA_BYTE, p.headerLength + j, (byte) (i * 31 + j));
            }
            p.setFlatPayload(len);
            p.srcGid = src;
            p.dstGid = dst;
            ps[i] = p;
        }
        return ps;
    }

    /** Up to {@code n} datagrams from the non-blocking {@code ch}, waiting at most 5 s (also for UdpGsoTest). */
    static List<byte[]> receive(DatagramChannel ch, int n) throws IOException, InterruptedException {
        List<byte[]> got = new ArrayList<>();
        ByteBuffer b = ByteBuffer.allocate(65_536);
        long end = System.nanoTime() + WAIT_NANOS;
        while (got.size() < n && System.nanoTime() < end) {
            b.clear();
            if (ch.receive(b) == null) {
                Thread.sleep(1);
                continue;
            }
            b.flip();
            byte[] d = new byte[b.remaining()];
            b.get(d);
            got.add(d);
        }
        return got;
    }

    @ParameterizedTest
    @EnumSource(value = UdpLink.Mode.class, names = {"NATIVE", "RAW_IPV4", "CHANNEL"})
    void aBatchPutsOnTheWireExactlyWhatOneSendPerPacketDoes(UdpLink.Mode mode) throws Exception {
        Assumptions.assumeTrue(mode == UdpLink.Mode.CHANNEL || UdpLink.libcSocketsAvailable());
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        int port = SoftDevices.freeUdpPort(31791, ia, ib);
        int peerPort = SoftDevices.freeUdpPort(port + 1, ia, ib);
        UdpLink link;
        try {
            link = UdpLink.open(ia, port, peerPort, mode, p -> p.release());
        } catch (IOException e) {
            Assumptions.assumeTrue(mode != UdpLink.Mode.RAW_IPV4, "raw mode needs CAP_NET_RAW: " + e.getMessage());
            throw e;
        }
        PacketPool pool = new PacketPool();
        try (link; DatagramChannel peer = DatagramChannel.open()) {
            peer.bind(new InetSocketAddress(ib, peerPort));
            peer.configureBlocking(false);
            Gid ga = Gid.of(ia);
            Gid gb = Gid.of(ib);
            int n = 21; // more than one batch (16): two sendmmsg runs
            for (Packet p : packets(pool, ga, gb, n, 100)) {
                link.send(p);
            }
            List<byte[]> one = receive(peer, n);
            long callsBefore = link.counters().get("udp_sendmmsg_calls");
            Packet[] batch = packets(pool, ga, gb, n, 100);
            Packet[] handedOver = batch.clone();
            assertEquals(0, link.send(batch, n));
            for (Packet p : batch) {
                assertNull(p, "every slot is cleared: the link owns the packets");
            }
            List<byte[]> batched = receive(peer, n);
            assertEquals(n, one.size());
            assertEquals(n, batched.size());
            for (int i = 0; i < n; i++) {
                assertArrayEquals(one.get(i), batched.get(i), "datagram " + i);
            }
            assertEquals(2L * n, link.sentDatagrams());
            long calls = link.counters().get("udp_sendmmsg_calls") - callsBefore;
            if (mode == UdpLink.Mode.CHANNEL) {
                assertFalse(link.sendsInBatches());
                assertNotNull(link.sendBatchUnavailable());
                assertEquals(0, calls);
            } else {
                assertTrue(link.sendsInBatches(), () -> link.sendBatchUnavailable());
                assertEquals(2, calls, "21 datagrams in two sendmmsg calls (16 + 5)");
            }
            for (Packet p : handedOver) {
                assertTrue(PacketAccess.markFree(p, true), "every packet went back to its pool");
            }
        }
    }

    @Test
    void withoutSendmmsgTheLinkSendsOneByOneAndSaysWhy() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        int port = SoftDevices.freeUdpPort(32291, ia, ib);
        int peerPort = SoftDevices.freeUdpPort(port + 1, ia, ib);
        PacketPool pool = new PacketPool();
        try (UdpLink link = UdpLink.open(ia, port, peerPort, UdpLink.Mode.NATIVE, p -> p.release());
             DatagramChannel peer = DatagramChannel.open()) {
            peer.bind(new InetSocketAddress(ib, peerPort));
            peer.configureBlocking(false);
            link.stopSendBatching("test: as if sendmmsg failed with ENOSYS");
            assertFalse(link.sendsInBatches());
            assertEquals("test: as if sendmmsg failed with ENOSYS", link.sendBatchUnavailable());
            Packet[] batch = packets(pool, Gid.of(ia), Gid.of(ib), 5, 7);
            link.send(batch, 5);
            List<byte[]> got = receive(peer, 5);
            assertEquals(5, got.size());
            for (int i = 0; i < 5; i++) {
                assertEquals(7 + i, psnOf(got.get(i)), "order kept");
            }
            assertEquals(0L, link.counters().get("udp_sendmmsg_calls"));
        }
    }

    private static int psnOf(byte[] datagram) {
        return (datagram[9] & 0xFF) << 16 | (datagram[10] & 0xFF) << 8 | (datagram[11] & 0xFF);
    }

    @Test
    void batchedSendsAllocateNothing() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        int port = SoftDevices.freeUdpPort(32791, ia, ib);
        AtomicInteger arrived = new AtomicInteger();
        PacketSink sink = p -> {
            arrived.incrementAndGet();
            p.release();
        };
        try (UdpLink la = UdpLink.open(ia, port, UdpLink.Mode.NATIVE, p -> p.release());
             UdpLink lb = UdpLink.open(ib, port, UdpLink.Mode.NATIVE, sink)) {
            PacketPool pool = new PacketPool();
            Gid ga = Gid.of(ia);
            Gid gb = Gid.of(ib);
            Packet[] batch = new Packet[UdpSocket.SEND_BATCH];
            sendBatches(la, pool, ga, gb, batch, 2_000);
            ThreadMXBean counters = (ThreadMXBean) ManagementFactory.getThreadMXBean();
            // One object per sendmmsg can remain that is the JDK's, not ours: its errno-capture check
            // (SharedUtils.checkCaptureSegment) slices the capture segment on every downcall, and only
            // C2's escape analysis removes the slice, when it inlines the whole downcall (JFR with
            // -XX:-UseTLAB, 2026-11-24). In a JVM of its own C2 removes it within 7-32 rounds; in a full
            // suite run (other tests compiled the same JDK methods first) it once stayed for 653 rounds.
            // So: measure rounds until one is clean, for at least 40 rounds and up to 10 s; a last round
            // that allocated exactly one such slice per sendmmsg and nothing else also passes. Anything
            // of ours (an object per packet, or per batch on top of the slice) still fails.
            long sliceBytes = sliceBytes(counters);
            int rounds = 500;
            int measured = 0;
            long allocated = Long.MAX_VALUE;
            long callsInRound = 0;
            StringBuilder history = new StringBuilder();
            long giveUp = System.nanoTime() + 10_000_000_000L;
            while (allocated >= 2 * 1024 && (measured < 40 || System.nanoTime() - giveUp < 0)) {
                long callsBefore = la.counters().get("udp_sendmmsg_calls");
                long before = counters.getCurrentThreadAllocatedBytes();
                sendBatches(la, pool, ga, gb, batch, rounds);
                allocated = counters.getCurrentThreadAllocatedBytes() - before;
                callsInRound = la.counters().get("udp_sendmmsg_calls") - callsBefore;
                measured++;
                if (measured <= 60) {
                    history.append(allocated).append(' ');
                }
            }
            long calls = la.counters().get("udp_sendmmsg_calls");
            long clean = allocated;
            long jdkSlices = callsInRound * sliceBytes;
            int roundsMeasured = measured;
            System.out.printf("batched send allocation for %d packets: %d B (measured round %d), %d sendmmsg calls;"
                    + " bytes per round: %s; a native segment slice: %d B%n", rounds * batch.length, clean, measured, calls,
                    history, sliceBytes);
            // One object per packet would be at least 16 B x 8 000 = 128 KB; one per batch 8 KB.
            assertTrue(clean < 2 * 1024 || clean == jdkSlices, () -> "allocated " + clean + " B for " + rounds
                    + " batches, in each of " + roundsMeasured + " rounds (bytes per round: " + history
                    + "); the JDK's capture slices would be " + jdkSlices + " B");
            assertTrue(calls >= 2_000L + 500L * measured, () -> "batches went as sendmmsg: " + calls);
            long end = System.nanoTime() + WAIT_NANOS;
            int expect = (2_000 + rounds * measured) * batch.length;
            while (arrived.get() + lb.socketDrops() < expect && System.nanoTime() < end) {
                Thread.sleep(1);
            }
            assertEquals(expect, arrived.get() + lb.socketDrops(), "every datagram arrived or was counted dropped");
        }
    }

    /** What one slice of a native segment takes on the heap here (the JDK's capture-state slice). */
    private static long sliceBytes(ThreadMXBean counters) {
        java.lang.foreign.MemorySegment native0 = java.lang.foreign.Arena.ofAuto().allocate(16, 8);
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            long before = counters.getCurrentThreadAllocatedBytes();
            slice = native0.asSlice(0, 4);
            best = Math.min(best, counters.getCurrentThreadAllocatedBytes() - before);
        }
        return best;
    }

    /** Keeps {@link #sliceBytes}'s slice on the heap. */
    static volatile Object slice;

    private static void sendBatches(UdpLink link, PacketPool pool, Gid src, Gid dst, Packet[] batch, int rounds) {
        int psn = 0;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < batch.length; i++) {
                Packet p = pool.acquire();
                Bth.writeAt(p.buffer, 0, Opcode.RC_RDMA_WRITE_MIDDLE, false, 0, 0xFFFF, 0x11, false, psn++);
                p.headerLength = Opcode.headerLength(Opcode.RC_RDMA_WRITE_MIDDLE);
                p.setFlatPayload(256);
                p.srcGid = src;
                p.dstGid = dst;
                batch[i] = p;
            }
            link.send(batch, batch.length);
        }
    }

    @Test
    void aMalformedDatagramInsideAReceiveBatchIsDroppedAndTheOthersKeepTheirOrder() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        int port = SoftDevices.freeUdpPort(33291, ia, ib);
        ConcurrentLinkedQueue<Integer> psns = new ConcurrentLinkedQueue<>();
        AtomicInteger batchEnds = new AtomicInteger();
        PacketSink sink = new PacketSink() {
            @Override
            public void receive(Packet p) {
                psns.add(new Bth().wrap(p.buffer, 0).psn());
                p.release();
            }

            @Override
            public void endBatch() {
                batchEnds.incrementAndGet();
            }
        };
        try (UdpLink la = UdpLink.open(ia, port, UdpLink.Mode.NATIVE, p -> p.release());
             UdpLink lb = UdpLink.open(ib, port, UdpLink.Mode.NATIVE, sink);
             DatagramChannel junk = DatagramChannel.open()) {
            junk.bind(new InetSocketAddress(ia, 0));
            assertTrue(lb.holdReceiveAgent(true), "only poll() receives: one batch we control");
            PacketPool pool = new PacketPool();
            Gid ga = Gid.of(ia);
            Gid gb = Gid.of(ib);
            InetSocketAddress to = new InetSocketAddress(ib, port);
            Packet[] first = sendPsns(pool, ga, gb, 0, 3);
            la.send(first, 3);
            junk.send(ByteBuffer.wrap(new byte[] {1, 2, 3}), to); // too short for a BTH and an ICRC
            byte[] badOpcode = new byte[40];
            badOpcode[0] = (byte) 0x1F; // no such RC opcode
            junk.send(ByteBuffer.wrap(badOpcode), to);
            Packet[] second = sendPsns(pool, ga, gb, 3, 3);
            la.send(second, 3);
            long end = System.nanoTime() + WAIT_NANOS;
            int handled = 0;
            int polls = 0;
            while (handled < 8 && System.nanoTime() < end) {
                int n = lb.poll();
                if (n > 0) {
                    handled += n;
                    polls++;
                } else {
                    Thread.sleep(1);
                }
            }
            assertEquals(8, handled, "six packets and two malformed datagrams were read");
            assertEquals(List.of(0, 1, 2, 3, 4, 5), new ArrayList<>(psns), "order kept");
            assertEquals(2L, lb.malformedDrops());
            assertEquals(polls, batchEnds.get(), "one device batch per receive call");
            lb.holdReceiveAgent(false);
        }
    }

    private static Packet[] sendPsns(PacketPool pool, Gid src, Gid dst, int from, int n) {
        Packet[] ps = new Packet[n];
        for (int i = 0; i < n; i++) {
            Packet p = pool.acquire();
            Bth.writeAt(p.buffer, 0, Opcode.RC_SEND_ONLY, false, 0, 0xFFFF, 0x11, false, from + i);
            p.headerLength = Opcode.headerLength(Opcode.RC_SEND_ONLY);
            p.setFlatPayload(8);
            p.srcGid = src;
            p.dstGid = dst;
            ps[i] = p;
        }
        return ps;
    }
}
