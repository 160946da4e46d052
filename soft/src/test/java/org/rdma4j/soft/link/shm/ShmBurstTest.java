// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rdma4j.soft.link.shm.ShmRingTest.gid;
import static org.rdma4j.soft.link.shm.ShmRingTest.me;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.link.PacketSink;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Reth;
import org.rdma4j.verbs.Gid;

/**
 * Bursts through a shared-memory ring: a run of an RC WRITE's packets in one entry of consecutive
 * slots (the ring on its own: layout, wrap-around, a held entry, corrupt entries), and through two
 * ShmLinks (what the receiver's engine is handed, a burst it keeps for a while, hostile entries).
 */
class ShmBurstTest {
    @TempDir
    Path dir;

    private static final int FIRST = Opcode.writeOpcode(Opcode.TRANSPORT_RC, Opcode.FIRST, false);
    private static final int MIDDLE = Opcode.writeOpcode(Opcode.TRANSPORT_RC, Opcode.MIDDLE, false);
    private static final int LAST = Opcode.writeOpcode(Opcode.TRANSPORT_RC, Opcode.LAST, false);

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    /** What a ring handler saw: packets and bursts as bytes, with the burst's header fields. */
    static final class Seen implements ShmConsumer.Handler {
        final List<String> entries = new ArrayList<>();
        final List<byte[]> bytes = new ArrayList<>();
        /** Bursts from this one on are held (onBurst returns false). */
        int holdFrom = Integer.MAX_VALUE;
        int bursts;

        @Override
        public void onPacket(int lane, MemorySegment ring, long data, int length, int hopLimit, int trafficClass) {
            entries.add("packet " + length);
            bytes.add(read(ring, data, length));
        }

        @Override
        public boolean onBurst(int lane, MemorySegment ring, long data, int length, int hopLimit, int trafficClass,
                               int packets, int mtu, int lastOpcode) {
            entries.add("burst " + length + " x" + packets + " mtu " + mtu + " last 0x" + Integer.toHexString(lastOpcode)
                    + " ttl " + hopLimit + " tos " + trafficClass);
            bytes.add(read(ring, data, length));
            return bursts++ < holdFrom;
        }

        private static byte[] read(MemorySegment ring, long data, int length) {
            byte[] b = new byte[length];
            MemorySegment.copy(ring, ValueLayout.JAVA_BYTE, data, b, 0, length);
            return b;
        }
    }

    private static boolean offerBurst(ShmProducer p, ShmRing ring, byte[] bytes, int packets) {
        long at = p.claimEntry(bytes.length);
        if (at < 0) {
            return false;
        }
        MemorySegment.copy(bytes, 0, ring.map, ValueLayout.JAVA_BYTE, at, bytes.length);
        p.publishBurst(bytes.length, 63, 5, packets, 4096, LAST);
        return true;
    }

    @Test
    void burstsTakeConsecutiveSlotsAndSkipToTheStartWhenTheyWouldPassTheEnd() throws IOException {
        Path f = dir.resolve("r.ring");
        int slots = 16;
        try (ShmRing owner = ShmRing.create(f, me(gid(1), 1), 1, 1, slots);
             ShmRing peer = ShmRing.open(f)) {
            ShmProducer p = peer.claim(me(gid(2), 2));
            Seen seen = new Seen();
            owner.consume(seen, 64); // opens the lane
            List<byte[]> sent = new ArrayList<>();
            List<String> expected = new ArrayList<>();
            int skips = 0;
            for (int round = 0; round < 40; round++) {
                byte[] small = pattern(100 + round, round);
                assertTrue(ShmRingTest.offer(p, peer, small));
                sent.add(small);
                expected.add("packet " + small.length);
                int len = 3 * ShmRing.SLOT_BYTES + round * 7; // 4 slots
                byte[] big = pattern(len, round + 1);
                long tailBefore = p.backlog();
                assertTrue(offerBurst(p, peer, big, 3), "room for the burst after the consumer caught up");
                if (p.backlog() - tailBefore > ShmRing.slotsFor(len)) {
                    skips++;
                }
                sent.add(big);
                expected.add("burst " + len + " x3 mtu 4096 last 0x" + Integer.toHexString(LAST) + " ttl 63 tos 5");
                owner.consume(seen, 64);
                assertEquals(0, p.backlog(), "everything taken");
            }
            assertEquals(expected, seen.entries);
            for (int i = 0; i < sent.size(); i++) {
                assertArrayEquals(sent.get(i), seen.bytes.get(i), "entry " + i);
            }
            assertTrue(skips > 0, "some bursts started over at slot 0 after a skip entry");
            assertEquals(0, owner.corruptions());
        }
    }

    @Test
    void aLaneWaitsAtAHeldBurstUntilItIsReleased() throws IOException {
        Path f = dir.resolve("r.ring");
        int slots = 32;
        try (ShmRing owner = ShmRing.create(f, me(gid(1), 1), 1, 1, slots);
             ShmRing peer = ShmRing.open(f)) {
            ShmProducer p = peer.claim(me(gid(2), 2));
            Seen seen = new Seen();
            seen.holdFrom = 0;
            owner.consume(seen, 64);
            byte[] held = pattern(2 * ShmRing.SLOT_BYTES, 9); // 3 slots
            assertTrue(offerBurst(p, peer, held, 2));
            assertTrue(ShmRingTest.offer(p, peer, pattern(40, 1)));
            assertEquals(1, owner.consume(seen, 64), "the burst, then the lane stops");
            assertEquals(List.of("burst " + held.length + " x2 mtu 4096 last 0x" + Integer.toHexString(LAST)
                    + " ttl 63 tos 5"), seen.entries);
            assertEquals(4, p.backlog(), "the head stays at the held burst: its 3 slots and the packet's");
            assertEquals(0, owner.consume(seen, 64), "nothing more from the lane while it is held");
            // the producer cannot reuse the held slots: it fills what is left and is refused
            int more = 0;
            while (ShmRingTest.offer(p, peer, pattern(8, more))) {
                more++;
            }
            assertEquals(slots - 4, more);
            MemorySegment data = peer.map.asSlice(ShmRing.HEADER_BYTES + ShmRing.LANE_HEADER_BYTES
                    + ShmRing.SLOT_HEADER_BYTES, held.length);
            assertArrayEquals(held, data.toArray(ValueLayout.JAVA_BYTE), "the held bytes are untouched");
            assertTrue(owner.hasWork() == false, "a held lane is no work until released");
            seen.holdFrom = Integer.MAX_VALUE;
            owner.releaseHold(0);
            assertTrue(owner.hasWork(), "released: work again");
            int n = 0;
            for (int i = 0; i < 10 && n < 1 + more; i++) {
                n += owner.consume(seen, 64);
            }
            assertEquals(1 + more, n, "the packet behind the burst and the rest");
            assertEquals(0, p.backlog());
            assertEquals("packet 40", seen.entries.get(1));
        }
    }

    @Test
    void aBurstEntryThatDoesNotFitItsLaneLosesTheLaneAndIsNotFollowed() throws IOException {
        Path f = dir.resolve("r.ring");
        try (ShmRing owner = ShmRing.create(f, me(gid(1), 1), 1, 1, 16);
             ShmRing peer = ShmRing.open(f)) {
            ShmProducer p = peer.claim(me(gid(2), 2));
            Seen seen = new Seen();
            owner.consume(seen, 64);
            assertTrue(offerBurst(p, peer, pattern(5000, 1), 2)); // 2 slots
            long slot0 = ShmRing.HEADER_BYTES + ShmRing.LANE_HEADER_BYTES;
            // the length now claims 4 slots where only 2 were published
            peer.map.set(ValueLayout.JAVA_INT, slot0, 3 * ShmRing.SLOT_BYTES);
            assertEquals(1, owner.consume(seen, 64));
            assertEquals(List.of(), seen.entries, "nothing handed on");
            assertEquals(1, owner.corruptions());
            long refused = 0;
            for (int i = 0; i < 20 && refused == 0; i++) {
                long slot = p.claimSlot();
                if (slot < 0) {
                    refused = slot;
                } else {
                    p.publish(1, 64, 0);
                }
            }
            assertEquals(-2, refused, "the producer learns the lane is broken once it needs the head");
        }
        try (ShmRing owner = ShmRing.create(dir.resolve("s.ring"), me(gid(1), 1), 1, 1, 16);
             ShmRing peer = ShmRing.open(dir.resolve("s.ring"))) {
            ShmProducer p = peer.claim(me(gid(2), 2));
            Seen seen = new Seen();
            owner.consume(seen, 64);
            assertTrue(ShmRingTest.offer(p, peer, pattern(64, 2)));
            long slot0 = ShmRing.HEADER_BYTES + ShmRing.LANE_HEADER_BYTES;
            peer.map.set(ValueLayout.JAVA_BYTE, slot0 + 6, (byte) 9); // a kind that does not exist
            assertEquals(1, owner.consume(seen, 64));
            assertEquals(List.of(), seen.entries);
            assertEquals(1, owner.corruptions());
        }
    }

    // ------------------------------------------------------------------ through two links

    /** A sink that keeps every packet it is handed (the test releases them), or copies and releases. */
    static final class Keep implements PacketSink {
        final LinkedBlockingQueue<Packet> kept = new LinkedBlockingQueue<>();
        final LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
        final LinkedBlockingQueue<byte[]> payloads = new LinkedBlockingQueue<>();
        volatile boolean keep;

        @Override
        public void receive(Packet p) {
            // read before the packet is reported: a test that sets keep once it saw this one does not keep it
            boolean keepThis = keep;
            byte[] b = new byte[p.payloadLength];
            p.copyPayload(0, MemorySegment.ofArray(b), 0, b.length);
            payloads.add(b);
            got.add("op 0x" + Integer.toHexString(Bth.opcodeOf(p.buffer)) + " psn " + Bth.psnOf(p.buffer) + " x"
                    + p.burstPackets + " mtu " + p.burstMtu + " last 0x" + Integer.toHexString(p.burstLastOpcode)
                    + " len " + p.payloadLength);
            if (keepThis) {
                kept.add(p);
            } else {
                p.release();
            }
        }
    }

    /** An RC WRITE burst of {@code packets} packets at {@code mtu} whose payload is a slice of {@code src}. */
    static Packet burst(PacketPool pool, Gid from, Gid to, MemorySegment src, int len, int packets, int mtu, int psn,
                        boolean first) {
        Packet p = pool.acquire();
        int op = first ? FIRST : MIDDLE;
        Bth.writeAt(p.buffer, 0, op, false, 0, 0xFFFF, 0x11, false, psn);
        if (first) {
            Reth.writeAt(p.buffer, Opcode.offsetOf(op, Opcode.HEADER_RETH), 0x1000, 0x77, 1 << 20);
        }
        p.headerLength = Opcode.headerLength(op);
        p.addPiece(src, 0, len);
        p.burstPackets = packets;
        p.burstMtu = mtu;
        p.burstLastOpcode = MIDDLE;
        p.srcGid = from;
        p.dstGid = to;
        return p;
    }

    @Test
    void aBurstArrivesAsOnePacketReadInPlaceAndAKeptOneHoldsItsLaneUntilReleased() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.41");
        InetAddress b = InetAddress.getByName("127.0.0.42");
        int port = SoftDevices.freeUdpPort(33791, a, b);
        Keep sinkA = new Keep();
        Keep sinkB = new Keep();
        try (Arena arena = Arena.ofConfined();
             ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sinkA);
             ShmLink lb = ShmLink.open(b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sinkB)) {
            PacketPool pool = new PacketPool();
            Gid ga = Gid.of(a);
            Gid gb = Gid.of(b);
            assertEquals(1, la.burstLimit(gb, 4096), "no ring mapped yet: no bursts");
            la.send(ShmLinkTest.sendOnlyPacket(pool, ga, gb, new byte[] {1, 2, 3, 4}));
            assertNotNull(sinkB.got.poll(10, TimeUnit.SECONDS), () -> "nothing arrived: " + la.counters());
            sinkB.payloads.clear();
            assertEquals(16, la.burstLimit(gb, 4096));
            assertEquals(64, la.burstLimit(gb, 1024));

            MemorySegment src = arena.allocate(64 * 1024);
            byte[] first = pattern(4 * 4096, 3);
            MemorySegment.copy(first, 0, src, ValueLayout.JAVA_BYTE, 0, first.length);
            sinkB.keep = true;
            la.send(burst(pool, ga, gb, src, first.length, 4, 4096, 100, true));
            assertEquals("op 0x" + Integer.toHexString(FIRST) + " psn 100 x4 mtu 4096 last 0x"
                    + Integer.toHexString(MIDDLE) + " len 16384", sinkB.got.poll(10, TimeUnit.SECONDS));
            Packet held = sinkB.kept.poll(10, TimeUnit.SECONDS);
            assertNotNull(held);
            assertEquals(1, held.pieces(), "the payload is read in place, in the ring");
            sinkB.keep = false;
            // more bursts meanwhile (the source now holds other bytes): they wait behind the held one
            List<byte[]> later = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                byte[] next = pattern(3 * 4096 + 100, 10 + i);
                MemorySegment.copy(next, 0, src, ValueLayout.JAVA_BYTE, 0, next.length);
                la.send(burst(pool, ga, gb, src, next.length, 4, 4096, 104 + 4 * i, false));
                later.add(next);
            }
            assertNull(sinkB.got.poll(200, TimeUnit.MILLISECONDS), "nothing passes a held burst");
            byte[] still = new byte[held.payloadLength];
            held.copyPayload(0, MemorySegment.ofArray(still), 0, still.length);
            assertArrayEquals(first, still, "the held payload was not overwritten");
            Thread releaser = Thread.ofPlatform().start(held::release);
            releaser.join();
            sinkB.payloads.poll(1, TimeUnit.SECONDS); // the held one's copy
            for (int i = 0; i < 5; i++) {
                byte[] got = sinkB.payloads.poll(10, TimeUnit.SECONDS);
                assertNotNull(got, () -> "burst after the held one missing: " + lb.counters());
                assertArrayEquals(later.get(i), got);
            }
            var cb = lb.counters();
            assertEquals(6, cb.get("shm_bursts_received"), cb::toString);
            assertEquals(1, cb.get("shm_bursts_held"), cb::toString);
            assertEquals(6, la.counters().get("shm_bursts_sent"));
            assertEquals(1 + 4 + 5 * 4, la.shmSentPackets(), "a burst counts as its packets");
            assertEquals(0, cb.get("shm_malformed_drops") + cb.get("shm_corrupt_slots"));
        }
    }

    @Test
    void hostileBurstEntriesAreDroppedAndCountedAndTheLaneGoesOn() throws Exception {
        InetAddress b = InetAddress.getByName("127.0.0.44");
        int port = SoftDevices.freeUdpPort(34791, b);
        Keep sink = new Keep();
        try (ShmLink lb = ShmLink.open(b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sink);
             ShmRing ring = ShmRing.open(ShmLink.fileFor(Gid.of(b), port))) {
            ShmProducer p = ring.claim(me(gid(43), port));
            assertNotNull(p);
            int bad = 0;
            // {opcode, qpn, packets, mtu, payload}
            int[][] cases = {
                {FIRST, 0x11, 1000, 4096, 8192},          // more packets than a burst carries
                {FIRST, 0x11, 2, 300, 500},               // not an MTU
                {FIRST, 0x11, 4, 1024, 2048},             // payload too short for 4 packets
                {FIRST, 0x11, 2, 1024, 4096},             // payload too long for 2 packets
                {Opcode.RC_SEND_FIRST, 0x11, 2, 1024, 2000}, // not a WRITE
                {LAST, 0x11, 2, 1024, 2000},              // ends a message: not a burst's first
                {FIRST, 1, 2, 1024, 2000},                // to the GSI
                {FIRST, 0xFFFFFF, 2, 1024, 2000},         // to multicast
                {0xFF, 0x11, 2, 1024, 2000},              // no such opcode
            };
            for (int[] c : cases) {
                putBurst(ring, p, c[0], c[1], c[2], c[3], c[4]);
                bad++;
            }
            putBurst(ring, p, FIRST, 0x11, 3, 1024, 2500); // a good one behind them
            String got = sink.got.poll(10, TimeUnit.SECONDS);
            assertEquals("op 0x" + Integer.toHexString(FIRST) + " psn 7 x3 mtu 1024 last 0x"
                    + Integer.toHexString(MIDDLE) + " len 2500", got, () -> "counters " + lb.counters());
            var c = lb.counters();
            assertEquals(bad, c.get("shm_malformed_drops"), c::toString);
            assertEquals(1, c.get("shm_bursts_received"), c::toString);
            assertEquals(0, c.get("shm_corrupt_slots"), "each entry's extent was right: only its contents were not");
            assertNull(sink.got.poll(50, TimeUnit.MILLISECONDS));
        }
    }

    private static void putBurst(ShmRing ring, ShmProducer p, int op, int qpn, int packets, int mtu, int payload) {
        int hl = Opcode.isValid(op) ? Opcode.headerLength(op) : Bth.LENGTH;
        long at = p.claimEntry(hl + payload);
        assertTrue(at >= 0);
        MemorySegment m = ring.map;
        m.asSlice(at, hl + payload).fill((byte) 0x5A);
        Bth.writeAt(m, at, op & 0xFF, false, 0, 0xFFFF, qpn, false, 7);
        p.publishBurst(hl + payload, 64, 0, packets, mtu, MIDDLE);
        if (ring.takeSleeper()) {
            ring.wakeSleeper();
        }
    }
}
