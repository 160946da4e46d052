// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The shared-memory ring file on its own: layout, wrap-around, back-pressure, lanes, hostile contents. */
class ShmRingTest {
    @TempDir
    Path dir;

    private static final byte[] GID_A = gid(1);
    private static final byte[] GID_B = gid(2);

    static byte[] gid(int last) {
        byte[] g = new byte[16];
        g[10] = (byte) 0xFF;
        g[11] = (byte) 0xFF;
        g[12] = 127;
        g[15] = (byte) last;
        return g;
    }

    static ShmRing.Identity me(byte[] gid, int port) {
        ProcessHandle p = ProcessHandle.current();
        return new ShmRing.Identity(p.pid(), ShmRing.processStartMs(p), gid, port);
    }

    /** Records every packet as its bytes, and lane openings. */
    static final class Recorder implements ShmConsumer.Handler {
        final List<byte[]> packets = new ArrayList<>();
        final List<String> events = new ArrayList<>();

        @Override
        public void onPacket(int lane, MemorySegment ring, long data, int length, int hopLimit, int trafficClass) {
            byte[] b = new byte[length];
            MemorySegment.copy(ring, ValueLayout.JAVA_BYTE, data, b, 0, length);
            packets.add(b);
        }

        @Override
        public void onLaneOpened(int lane, byte[] gid, int port) {
            events.add("open " + lane + " port " + port);
        }

        @Override
        public void onLaneClosed(int lane) {
            events.add("close " + lane);
        }
    }

    static boolean offer(ShmProducer p, ShmRing ring, byte[] bytes) {
        long slot = p.claimSlot();
        if (slot < 0) {
            return false;
        }
        MemorySegment.copy(bytes, 0, ring.map, ValueLayout.JAVA_BYTE, slot, bytes.length);
        p.publish(bytes.length, 64, 0);
        return true;
    }

    @Test
    void packetsArriveInOrderAcrossManyWrapArounds() throws IOException {
        Path f = dir.resolve("r.ring");
        try (ShmRing owner = ShmRing.create(f, me(GID_A, 4791), 1, 2, 8);
             ShmRing peer = ShmRing.open(f)) {
            ShmProducer p = peer.claim(me(GID_B, 4792));
            assertNotNull(p);
            Recorder r = new Recorder();
            int next = 0;
            int seen = 0;
            for (int round = 0; round < 50; round++) {
                for (int k = 0; k < 5; k++) {
                    assertTrue(offer(p, peer, new byte[] {(byte) next, (byte) (next >> 8), 7}));
                    next++;
                }
                owner.consume(r, 3);
                owner.consume(r, 3);
                for (; seen < r.packets.size(); seen++) {
                    assertArrayEquals(new byte[] {(byte) seen, (byte) (seen >> 8), 7}, r.packets.get(seen));
                }
            }
            assertEquals(250, r.packets.size());
            assertEquals(List.of("open " + p.lane + " port 4792"), r.events);
            assertEquals(0, owner.corruptions());
        }
    }

    @Test
    void aProducerThatTakesTheSleeperEndsTheConsumersFutexSleep() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Futex.isAvailable(), "no futex here");
        Path f = dir.resolve("r.ring");
        try (ShmRing owner = ShmRing.create(f, me(GID_A, 1), 1, 1, 4, ShmRing.FLAG_FUTEX);
             ShmRing peer = ShmRing.open(f);
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
            assertEquals(ShmRing.FLAG_FUTEX, peer.flags() & ShmRing.FLAG_FUTEX, "a sender sees how the owner sleeps");
            ShmProducer p = peer.claim(me(GID_B, 2));
            Recorder r = new Recorder();
            owner.consume(r, 1); // opens the lane
            MemorySegment ts = arena.allocate(Futex.TIMESPEC_BYTES, 8);
            java.util.concurrent.CountDownLatch asleep = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.atomic.AtomicInteger sleeps = new java.util.concurrent.atomic.AtomicInteger();
            Thread consumer = Thread.ofPlatform().start(() -> {
                assertTrue(owner.prepareToSleep(), "nothing there yet");
                asleep.countDown();
                while (!owner.hasWork()) {
                    sleeps.incrementAndGet();
                    // not woken: a minute, far past the join below
                    owner.sleepUntilWoken(60_000_000_000L, ts);
                }
                owner.awake();
            });
            assertTrue(asleep.await(10, java.util.concurrent.TimeUnit.SECONDS));
            Thread.sleep(20); // most likely in the kernel now (either way the wake-up must end it)
            assertTrue(offer(p, peer, new byte[] {9}));
            assertTrue(peer.takeSleeper(), "the consumer said it sleeps: this producer must wake it");
            peer.wakeSleeper();
            consumer.join(10_000);
            assertTrue(!consumer.isAlive(), "the consumer still sleeps");
            assertTrue(sleeps.get() >= 1);
            assertTrue(!peer.takeSleeper(), "one wake-up per sleep");
            assertEquals(1, owner.consume(r, 10));
        }
    }

    @Test
    void aFullLaneRefusesUntilTheConsumerTakesSome() throws IOException {
        Path f = dir.resolve("r.ring");
        try (ShmRing owner = ShmRing.create(f, me(GID_A, 1), 1, 1, 4);
             ShmRing peer = ShmRing.open(f)) {
            ShmProducer p = peer.claim(me(GID_B, 2));
            for (int i = 0; i < 4; i++) {
                assertTrue(offer(p, peer, new byte[] {(byte) i}));
            }
            assertEquals(-1, p.claimSlot(), "a full lane gives no slot");
            assertEquals(4, p.backlog());
            Recorder r = new Recorder();
            assertEquals(1, owner.consume(r, 1));
            assertTrue(offer(p, peer, new byte[] {4}));
            assertEquals(-1, p.claimSlot());
            assertEquals(4, owner.consume(r, 10));
            assertEquals(List.of(0, 1, 2, 3, 4), r.packets.stream().map(b -> (int) b[0]).toList());
        }
    }

    @Test
    void lanesAreClaimedOncePerProducerAndFreedWhenReleased() throws IOException {
        Path f = dir.resolve("r.ring");
        try (ShmRing owner = ShmRing.create(f, me(GID_A, 1), 1, 2, 4);
             ShmRing peer = ShmRing.open(f)) {
            ShmProducer p1 = peer.claim(me(GID_B, 2));
            ShmProducer p2 = peer.claim(me(GID_B, 3));
            assertNotNull(p1);
            assertNotNull(p2);
            assertTrue(p1.lane != p2.lane);
            assertNull(peer.claim(me(GID_B, 4)), "every lane is taken");
            Recorder r = new Recorder();
            owner.consume(r, 1);
            p1.release();
            owner.consume(r, 1); // the consumer frees the released lane
            assertTrue(r.events.contains("close " + p1.lane), () -> r.events.toString());
            assertNotNull(peer.claim(me(GID_B, 4)), "the freed lane can be claimed again");
        }
    }

    @Test
    void aCorruptTailOrLengthIsRejectedNotFollowed() throws IOException {
        Path f = dir.resolve("r.ring");
        try (ShmRing owner = ShmRing.create(f, me(GID_A, 1), 1, 1, 4);
             ShmRing peer = ShmRing.open(f)) {
            ShmProducer p = peer.claim(me(GID_B, 2));
            assertTrue(offer(p, peer, new byte[] {1, 2}));
            long lane = ShmRing.HEADER_BYTES;
            long slot0 = lane + ShmRing.LANE_HEADER_BYTES;
            // a hostile length: far past the slot
            peer.map.set(ValueLayout.JAVA_INT, slot0, Integer.MAX_VALUE);
            Recorder r = new Recorder();
            assertEquals(1, owner.consume(r, 8));
            assertEquals(0, r.packets.size(), "an impossible length is dropped");
            assertEquals(1, owner.corruptions());
            // a hostile tail: more packets than slots
            peer.map.set(ValueLayout.JAVA_LONG, lane + 128, 1_000_000L);
            assertEquals(0, owner.consume(r, 8));
            assertEquals(2, owner.corruptions());
            assertEquals(0, r.packets.size());
            assertEquals(-2, p.claimSlot() == -2 ? -2 : fillUntilRefused(p, peer), "the producer learns the lane is broken");
        }
    }

    private static long fillUntilRefused(ShmProducer p, ShmRing ring) {
        for (int i = 0; i < 10; i++) {
            long s = p.claimSlot();
            if (s < 0) {
                return s;
            }
            p.publish(1, 64, 0);
        }
        return 0;
    }

    @Test
    void aFileWhoseHeaderDoesNotMatchItsSizeIsRefused() throws IOException {
        Path f = dir.resolve("r.ring");
        try (ShmRing owner = ShmRing.create(f, me(GID_A, 1), 1, 1, 4)) {
            owner.map.set(ValueLayout.JAVA_INT, 16, 1 << 13); // claims more slots than the file holds
            assertThrows(IOException.class, () -> ShmRing.open(f));
        }
        Path g = dir.resolve("short.ring");
        Files.write(g, new byte[100]);
        assertThrows(IOException.class, () -> ShmRing.open(g));
    }

    @Test
    void theFileIsPrivateToItsUserAndGoneAfterClose() throws IOException {
        Path f = dir.resolve("r.ring");
        ShmRing owner = ShmRing.create(f, me(GID_A, 1), 1, 1, 4);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        owner.close();
        assertTrue(!Files.exists(f));
    }

    @Test
    void aStaleFileOfADeadProcessIsReplacedALiveOnesIsNot() throws Exception {
        Path f = dir.resolve("r.ring");
        Process dead = new ProcessBuilder("true").start();
        dead.waitFor();
        ShmRing.Identity ghost = new ShmRing.Identity(dead.pid(), 1L, GID_A, 1);
        ShmRing stale = ShmRing.create(f, ghost, 1, 1, 4);
        // leave the file as a crashed owner would: mapped no more, still in the directory
        Path keep = dir.resolve("keep.ring");
        Files.copy(f, keep);
        stale.close();
        Files.move(keep, f);
        assertThrows(IOException.class, () -> ShmRing.open(f), "a sender does not use a dead device's ring");
        try (ShmRing fresh = ShmRing.create(f, me(GID_A, 1), 1, 1, 4)) {
            assertThrows(IOException.class, () -> ShmRing.create(f, me(GID_A, 1), 1, 1, 4),
                    "a live owner's file is not taken over");
            assertNotNull(ShmRing.open(f).claim(me(GID_B, 2)));
        }
    }
}
