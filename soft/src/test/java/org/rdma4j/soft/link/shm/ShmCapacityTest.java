// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.link.PacketSink;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.verbs.Gid;

/** What a ring cannot take at once: more sending devices than lanes, more packets than a lane's slots. */
class ShmCapacityTest {
    @TempDir
    Path dir;

    /** One more sender than the ring has lanes, all with link=shm: the last one uses UDP, counted, and every packet arrives. */
    @Test
    void moreSendingDevicesThanLanesAllDeliver() throws Exception {
        int senders = ShmLink.LANES + 1;
        InetAddress[] addrs = new InetAddress[senders + 1];
        for (int i = 0; i <= senders; i++) {
            addrs[i] = InetAddress.getByName("127.0.1." + (10 + i));
        }
        int port = SoftDevices.freeUdpPort(37791, addrs);
        ShmLinkTest.Collect sink = new ShmLinkTest.Collect();
        List<ShmLink> from = new ArrayList<>();
        try (ShmLink to = ShmLink.open(addrs[senders], port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sink,
                dir, ShmRingFiles.FOR_THIS_PROCESS)) {
            PacketPool pool = new PacketPool();
            for (int i = 0; i < senders; i++) {
                ShmLink l = ShmLink.open(addrs[i], port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM,
                        new ShmLinkTest.Collect(), dir, ShmRingFiles.FOR_THIS_PROCESS);
                from.add(l);
                l.send(ShmLinkTest.sendOnlyPacket(pool, Gid.of(addrs[i]), Gid.of(addrs[senders]), new byte[] {(byte) i}));
            }
            boolean[] seen = new boolean[senders];
            for (int i = 0; i < senders; i++) {
                byte[] got = sink.got.poll(10, TimeUnit.SECONDS);
                assertTrue(got != null, () -> "missing packets; " + from.getLast().counters());
                seen[got[0]] = true;
            }
            long fallbacks = 0;
            for (ShmLink l : from) {
                fallbacks += l.counters().get("shm_no_lane_fallbacks");
                assertEquals(0, l.counters().get("shm_no_ring_drops"));
            }
            assertEquals(1, fallbacks, "one sender found no lane");
            for (boolean s : seen) {
                assertTrue(s);
            }
        } finally {
            for (ShmLink l : from) {
                l.close();
            }
        }
    }

    /** Holds the first packet until released: the receiver's agent stops consuming, so the lane fills. */
    static final class Stall implements PacketSink {
        final CountDownLatch go = new CountDownLatch(1);
        final AtomicLong n = new AtomicLong();

        @Override
        public void receive(Packet p) {
            p.release();
            try {
                go.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            n.incrementAndGet();
        }
    }

    /**
     * A burst four times a lane's slots to a receiver that stopped consuming: what does not fit waits in
     * the sender's backlog (it is not dropped and left to retransmission) and arrives, in order, once the
     * receiver consumes again.
     */
    @Test
    void aFullLaneHoldsPacketsBackInsteadOfDroppingThem() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.1.40");
        InetAddress b = InetAddress.getByName("127.0.1.41");
        int port = SoftDevices.freeUdpPort(37891, a, b);
        Stall sink = new Stall();
        int n = 4 * ShmLink.SLOTS;
        try (ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, new ShmLinkTest.Collect(),
                dir, ShmRingFiles.FOR_THIS_PROCESS);
             ShmLink lb = ShmLink.open(b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, sink,
                     dir, ShmRingFiles.FOR_THIS_PROCESS)) {
            PacketPool pool = new PacketPool();
            for (int i = 0; i < n; i++) {
                la.send(ShmLinkTest.sendOnlyPacket(pool, Gid.of(a), Gid.of(b), new byte[] {(byte) i}));
            }
            assertTrue(la.counters().get("shm_backlog_queued") > 0, () -> "the lane never filled; " + la.counters());
            sink.go.countDown();
            long end = System.nanoTime() + 30_000_000_000L;
            while (sink.n.get() < n && System.nanoTime() < end) {
                Thread.sleep(1);
            }
            assertEquals(0, la.fullDrops(), () -> "counters " + la.counters());
            assertEquals(n, sink.n.get(), () -> "counters " + la.counters() + " / " + lb.counters());
        }
    }
}
