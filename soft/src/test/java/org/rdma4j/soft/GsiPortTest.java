// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.SplittableRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.soft.engine.Gsi;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Deth;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Ipv4Header;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.UdpHeader;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * QP1 of the soft device ({@link SoftContext#openGsi}): MADs between two devices both ways, in process
 * and over UDP, with the right {@link GsiPort.Source}; what is dropped and counted (wrong Q_Key, P_Key,
 * opcode or length, no open port, a full queue) without losing the next good MAD; open/close rules
 * (EBUSY, EINVAL, EBADF, close waking a receiver); user QPs never numbered 1. Waits are bounded (5 s)
 * and nothing asserts on time.
 */
class GsiPortTest {
    private static final long WAIT_NS = 5_000_000_000L;
    private static final int GID_INDEX = 1;
    private static int nextName;

    private static String name(String prefix) {
        return "gsi-" + prefix + "-" + ++nextName;
    }

    /** A MAD whose every byte is derived from {@code seed}, with a CM-looking header. */
    static MemorySegment mad(Arena arena, int seed) {
        MemorySegment m = arena.allocate(GsiPort.MAD_SIZE);
        for (int i = 0; i < GsiPort.MAD_SIZE; i++) {
            m.set(ValueLayout.JAVA_BYTE, i, (byte) (seed * 31 + i));
        }
        m.set(ValueLayout.JAVA_BYTE, 0, (byte) 1); // base version
        m.set(ValueLayout.JAVA_BYTE, 1, (byte) 7); // class CM
        return m;
    }

    private static void assertSameMad(MemorySegment expected, MemorySegment got) {
        assertEquals(-1L, expected.mismatch(got.asSlice(0, GsiPort.MAD_SIZE)), "the MAD arrived changed");
    }

    private static void receiveExpecting(GsiPort port, Arena arena, MemorySegment expected, Gid fromGid, int fromQpn) {
        MemorySegment got = arena.allocate(GsiPort.MAD_SIZE);
        GsiPort.Source from = new GsiPort.Source();
        assertTrue(port.receive(got, from, WAIT_NS), "no MAD within 5 s");
        assertSameMad(expected, got);
        assertEquals(fromGid, from.gid);
        assertEquals(fromQpn, from.qpn);
        assertEquals(0xFFFF, from.pkey);
    }

    private static long counter(Context c, String name) {
        Long v = c.counters(1).get(name);
        assertNotNull(v, "no counter " + name + " in " + c.counters(1));
        return v;
    }

    private static void awaitCounter(Context c, String name, long atLeast) throws InterruptedException {
        long end = System.nanoTime() + WAIT_NS;
        while (counter(c, name) < atLeast) {
            assertTrue(System.nanoTime() < end, name + " did not reach " + atLeast + ": " + c.counters(1));
            Thread.sleep(1);
        }
    }

    private static GsiPort open(Context c) {
        return ((GsiPort.GsiAccess) c).openGsi(1, GID_INDEX);
    }

    // ------------------------------------------------------------------ exchanges

    private static void exchangeBothWays(Device a, Device b) {
        try (Arena arena = Arena.ofConfined(); Context ca = a.open(); Context cb = b.open()) {
            assertTrue(ca instanceof GsiPort.GsiAccess);
            try (GsiPort pa = open(ca); GsiPort pb = open(cb)) {
                assertEquals(ca.queryGid(1, GID_INDEX), pa.localGid());
                assertEquals(1, pa.portNum());
                for (int i = 0; i < 3; i++) {
                    MemorySegment m1 = mad(arena, 2 * i);
                    pa.send(m1, pb.localGid(), 0xFFFF);
                    receiveExpecting(pb, arena, m1, pa.localGid(), 1);
                    MemorySegment m2 = mad(arena, 2 * i + 1);
                    pb.send(m2, pa.localGid(), 0xFFFF);
                    receiveExpecting(pa, arena, m2, pb.localGid(), 1);
                }
                // a limited-member P_Key of the default partition is accepted too, and shown as sent
                pa.send(mad(arena, 99), pb.localGid(), 0x7FFF);
                GsiPort.Source from = new GsiPort.Source();
                assertTrue(pb.receive(arena.allocate(GsiPort.MAD_SIZE), from, WAIT_NS));
                assertEquals(0x7FFF, from.pkey);
            }
        }
    }

    @Test
    void inProcessDevicesExchangeMadsBothWays() {
        LoopbackFabric fabric = new LoopbackFabric();
        Device a = SoftDevices.createLoopback(name("a"), fabric, null);
        Device b = SoftDevices.createLoopback(name("b"), fabric, null);
        try {
            exchangeBothWays(a, b);
        } finally {
            SoftDevices.remove(a);
            SoftDevices.remove(b);
        }
    }

    @ParameterizedTest
    @EnumSource(value = UdpLink.Mode.class, names = {"AUTO", "CHANNEL"})
    void udpDevicesExchangeMadsBothWays(UdpLink.Mode mode) throws Exception {
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        int port = SoftDevices.freeUdpPort(27791, ia, ib);
        Device a = SoftDevices.createUdp(name("udp-a"), ia, port, port, mode);
        Device b;
        try {
            b = SoftDevices.createUdp(name("udp-b"), ib, port, port, mode);
        } catch (RuntimeException e) {
            SoftDevices.remove(a);
            throw e;
        }
        try {
            exchangeBothWays(a, b);
        } finally {
            SoftDevices.remove(a);
            SoftDevices.remove(b);
        }
    }

    @Test
    void aMadToItsOwnGidComesBack() {
        Device a = SoftDevices.createLoopback(name("self"), new LoopbackFabric(), null);
        try (Arena arena = Arena.ofConfined(); Context ca = a.open(); GsiPort pa = open(ca)) {
            MemorySegment m = mad(arena, 5);
            pa.send(m, pa.localGid(), 0xFFFF);
            receiveExpecting(pa, arena, m, pa.localGid(), 1);
        } finally {
            SoftDevices.remove(a);
        }
    }

    /** Sending and receiving a MAD allocate nothing per MAD (in process: both run on the test thread). */
    @Test
    void sendAndReceiveAllocateNothingPerMad() {
        var threads = java.lang.management.ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(threads instanceof com.sun.management.ThreadMXBean,
                "needs per-thread allocation counters");
        var counters = (com.sun.management.ThreadMXBean) threads;
        LoopbackFabric fabric = new LoopbackFabric();
        Device a = SoftDevices.createLoopback(name("alloc-a"), fabric, null);
        Device b = SoftDevices.createLoopback(name("alloc-b"), fabric, null);
        try (Arena arena = Arena.ofConfined(); Context ca = a.open(); Context cb = b.open(); GsiPort pa = open(ca);
             GsiPort pb = open(cb)) {
            MemorySegment out = mad(arena, 1);
            MemorySegment in = arena.allocate(GsiPort.MAD_SIZE);
            GsiPort.Source from = new GsiPort.Source();
            Gid to = pb.localGid();
            int measured = 20_000;
            for (int i = 0; i < 20_000; i++) {
                pa.send(out, to, 0xFFFF);
                assertTrue(pb.receive(in, from, 0));
            }
            long before = counters.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < measured; i++) {
                pa.send(out, to, 0xFFFF);
                if (!pb.receive(in, from, 0)) {
                    throw new AssertionError("MAD " + i + " did not arrive");
                }
            }
            long allocated = counters.getCurrentThreadAllocatedBytes() - before;
            // one object per MAD would be at least 16 B x 20000 = 320 KB
            assertTrue(allocated < 32 * 1024, () -> allocated + " B allocated for " + measured + " MADs");
            assertSameMad(out, in);
        } finally {
            SoftDevices.remove(a);
            SoftDevices.remove(b);
        }
    }

    // ------------------------------------------------------------------ drops

    /** Builds a UD packet to QPN 1 of the device as a sender at {@code from} would, and delivers it. */
    private static void inject(Context c, Gid from, int opcode, int pkey, int qkey, int srcQpn, MemorySegment payload,
                               int length) {
        Hca hca = ((SoftContext) c).hca;
        Packet p = hca.packets.acquire();
        Bth.writeAt(p.buffer, 0, opcode, false, (4 - (length & 3)) & 3, pkey, Gsi.QPN, false, 0);
        if (Opcode.hasDeth(opcode)) {
            Deth.writeAt(p.buffer, Opcode.offsetOf(opcode, Opcode.HEADER_DETH), qkey, srcQpn);
        }
        p.headerLength = Opcode.headerLength(opcode);
        MemorySegment.copy(payload, 0, p.buffer, p.headerLength, length);
        p.setFlatPayload(length);
        p.srcGid = from;
        p.dstGid = c.queryGid(1, GID_INDEX);
        hca.receive(p);
    }

    @Test
    void badMadsAreDroppedAndCountedAndTheNextGoodOneArrives() {
        Device d = SoftDevices.createLoopback(name("drops"), new LoopbackFabric(), null);
        Gid peer = Gid.of(new byte[] {(byte) 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9});
        try (Arena arena = Arena.ofConfined(); Context c = d.open()) {
            MemorySegment bad = mad(arena, 1);
            // no port open yet: a good MAD is dropped as no_port
            inject(c, peer, Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 1, bad, 256);
            assertEquals(1L, counter(c, "gsi_no_port_drops"));
            try (GsiPort port = open(c)) {
                GsiPort.Source from = new GsiPort.Source();
                MemorySegment got = arena.allocate(GsiPort.MAD_SIZE);
                assertFalse(port.receive(got, from, 0), "a MAD from before the port was open was kept");
                inject(c, peer, Opcode.UD_SEND_ONLY, 0xFFFF, 0x1234_5678, 1, bad, 256);
                assertEquals(1L, counter(c, "bad_qkey_drops"));
                inject(c, peer, Opcode.UD_SEND_ONLY, 0x8001, Gsi.QKEY, 1, bad, 256);
                assertEquals(1L, counter(c, "bad_pkey_drops"));
                inject(c, peer, Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 1, bad, 100);
                inject(c, peer, Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 1, bad, 255);
                inject(c, peer, Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 1, arena.allocate(1024), 1024);
                assertEquals(3L, counter(c, "gsi_length_drops"));
                long malformed = counter(c, "malformed_drops");
                inject(c, peer, Opcode.UD_SEND_ONLY_WITH_IMMEDIATE, 0xFFFF, Gsi.QKEY, 1, bad, 256);
                inject(c, peer, Opcode.RC_SEND_ONLY, 0xFFFF, Gsi.QKEY, 1, bad, 256);
                assertEquals(malformed + 2, counter(c, "malformed_drops"));
                assertFalse(port.receive(got, from, 0), "a bad MAD was delivered");

                MemorySegment good = mad(arena, 2);
                inject(c, peer, Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 0x123, good, 256);
                receiveExpecting(port, arena, good, peer, 0x123);
                assertEquals(0L, counter(c, "gsi_overflow_drops"));
                assertEquals(0L, counter(c, "unknown_qpn_drops"), "QPN 1 is not an unknown QP");
            }
            // closed again: dropped as no_port, and nothing is left for the next opening
            inject(c, peer, Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 1, bad, 256);
            assertEquals(2L, counter(c, "gsi_no_port_drops"));
            try (GsiPort port = open(c)) {
                assertFalse(port.receive(arena.allocate(GsiPort.MAD_SIZE), new GsiPort.Source(), 0));
            }
        } finally {
            SoftDevices.remove(d);
        }
    }

    @Test
    void aFullQueueDropsAndCountsAndKeepsWhatItHolds() {
        Device d = SoftDevices.createLoopback(name("full"), new LoopbackFabric(), null);
        Gid peer = Gid.of(new byte[] {(byte) 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10});
        try (Arena arena = Arena.ofConfined(); Context c = d.open(); GsiPort port = open(c)) {
            for (int i = 0; i < Gsi.CAPACITY + 3; i++) {
                inject(c, peer, Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 1, mad(arena, i), 256);
            }
            assertEquals(3L, counter(c, "gsi_overflow_drops"));
            for (int i = 0; i < Gsi.CAPACITY; i++) {
                receiveExpecting(port, arena, mad(arena, i), peer, 1);
            }
            assertFalse(port.receive(arena.allocate(GsiPort.MAD_SIZE), new GsiPort.Source(), 0));
            MemorySegment again = mad(arena, 1000);
            inject(c, peer, Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 1, again, 256);
            receiveExpecting(port, arena, again, peer, 1);
        } finally {
            SoftDevices.remove(d);
        }
    }

    /**
     * A user UD QP of one device sends to QPN 1 of another: with its own Q_Key (a user QP may not use
     * the controlled GSI Q_Key) it is dropped as bad_qkey; the GSI's own MAD after it arrives.
     */
    @Test
    void aUserUdQpCannotSpeakToQp1WithoutTheGsiQkey() throws Exception {
        LoopbackFabric fabric = new LoopbackFabric();
        Device a = SoftDevices.createLoopback(name("ud-a"), fabric, null);
        Device b = SoftDevices.createLoopback(name("ud-b"), fabric, null);
        try (Arena arena = Arena.ofShared(); Context ca = a.open(); Context cb = b.open(); GsiPort pb = open(cb);
             GsiPort pa = open(ca)) {
            ProtectionDomain pd = ca.allocPd();
            CompletionQueue cq = ca.createCq(8);
            QueuePair qp = pd.createQp(new QpInitAttr(QpType.UD, cq, cq).cap(new QpCap(4, 4, 1, 1, 0)));
            MemoryRegion mr = pd.regMr(arena.allocate(GsiPort.MAD_SIZE), 0);
            qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).qkey(0x11),
                    QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY);
            qp.modify(new QpAttr().state(QpState.RTR), QpAttrMask.STATE);
            qp.modify(new QpAttr().state(QpState.RTS).sqPsn(0), QpAttrMask.STATE | QpAttrMask.SQ_PSN);
            var ah = pd.createAh(AhAttr.roce(pb.localGid(), GID_INDEX));
            qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                    .sge(mr, 0, GsiPort.MAD_SIZE).ud(ah, Gsi.QPN, 0x11));
            WorkCompletion[] wc = WorkCompletion.array(1);
            long end = System.nanoTime() + WAIT_NS;
            while (cq.poll(wc) == 0) {
                assertTrue(System.nanoTime() < end, "no send completion");
                Thread.onSpinWait();
            }
            assertEquals(WcStatus.SUCCESS, wc[0].status());
            awaitCounter(cb, "bad_qkey_drops", 1);
            MemorySegment m = mad(arena, 7);
            pa.send(m, pb.localGid(), 0xFFFF);
            receiveExpecting(pb, arena, m, pa.localGid(), 1);
            qp.close();
            ah.close();
            mr.close();
            cq.close();
            pd.close();
        } finally {
            SoftDevices.remove(a);
            SoftDevices.remove(b);
        }
    }

    // ------------------------------------------------------------------ open, close, wait

    @Test
    void receiveTimesOutWithFalse() {
        Device d = SoftDevices.createLoopback(name("timeout"), new LoopbackFabric(), null);
        try (Arena arena = Arena.ofConfined(); Context c = d.open(); GsiPort port = open(c)) {
            GsiPort.Source from = new GsiPort.Source();
            assertFalse(port.receive(arena.allocate(GsiPort.MAD_SIZE), from, 0));
            assertFalse(port.receive(arena.allocate(GsiPort.MAD_SIZE), from, 1_000_000));
            assertFalse(port.receive(arena.allocate(GsiPort.MAD_SIZE), from, -5));
            assertEquals(null, from.gid, "a receive that timed out filled the Source");
        } finally {
            SoftDevices.remove(d);
        }
    }

    @Test
    void closeWakesABlockedReceiverWithEbadf() throws Exception {
        Device d = SoftDevices.createLoopback(name("wake"), new LoopbackFabric(), null);
        try (Context c = d.open()) {
            GsiPort port = open(c);
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread receiver = new Thread(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    port.receive(arena.allocate(GsiPort.MAD_SIZE), new GsiPort.Source(), 60_000_000_000L);
                } catch (Throwable t) {
                    thrown.set(t);
                }
            });
            receiver.start();
            long end = System.nanoTime() + WAIT_NS;
            while (receiver.getState() != Thread.State.TIMED_WAITING) {
                assertTrue(System.nanoTime() < end, "the receiver never waited");
                Thread.sleep(1);
            }
            port.close();
            receiver.join(WAIT_NS / 1_000_000);
            assertFalse(receiver.isAlive(), "close did not wake the receiver");
            VerbsException e = assertInstanceOf(thrown.get());
            assertEquals(Errno.EBADF, e.errno());
        } finally {
            SoftDevices.remove(d);
        }
    }

    private static VerbsException assertInstanceOf(Throwable t) {
        assertNotNull(t, "the receiver returned instead of failing");
        assertTrue(t instanceof VerbsException, "not a VerbsException: " + t);
        return (VerbsException) t;
    }

    @Test
    void oneOpenPortPerDeviceAndOpenAgainAfterClose() {
        Device d = SoftDevices.createLoopback(name("busy"), new LoopbackFabric(), null);
        try (Arena arena = Arena.ofConfined(); Context c1 = d.open(); Context c2 = d.open()) {
            GsiPort first = open(c1);
            assertEquals(Errno.EBUSY, assertThrows(VerbsException.class, () -> open(c1)).errno());
            assertEquals(Errno.EBUSY, assertThrows(VerbsException.class, () -> open(c2)).errno());
            assertEquals(Errno.EBUSY, assertThrows(VerbsException.class, c1::close).errno(),
                    "a context with an open GsiPort closed");
            first.close();
            first.close(); // idempotent
            assertEquals(Errno.EBADF, assertThrows(VerbsException.class,
                    () -> first.send(mad(arena, 1), first.localGid(), 0xFFFF)).errno());
            assertEquals(Errno.EBADF, assertThrows(VerbsException.class,
                    () -> first.receive(arena.allocate(256), new GsiPort.Source(), 0)).errno());
            try (GsiPort second = open(c2)) {
                MemorySegment m = mad(arena, 3);
                second.send(m, second.localGid(), 0xFFFF);
                receiveExpecting(second, arena, m, second.localGid(), 1);
            }
            try (GsiPort third = open(c1)) {
                assertNotNull(third);
            }
        } finally {
            SoftDevices.remove(d);
        }
    }

    @Test
    void badArgumentsAreEinval() {
        Device d = SoftDevices.createLoopback(name("args"), new LoopbackFabric(), null);
        try (Arena arena = Arena.ofConfined(); Context c = d.open()) {
            GsiPort.GsiAccess access = (GsiPort.GsiAccess) c;
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> access.openGsi(2, 1)).errno());
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> access.openGsi(0, 1)).errno());
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> access.openGsi(1, -1)).errno());
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> access.openGsi(1, 7)).errno(),
                    "an empty GID index");
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> access.openGsi(1, 99)).errno());
            try (GsiPort port = access.openGsi(1, 0)) {
                assertEquals(c.queryGid(1, 0), port.localGid());
                Gid to = port.localGid();
                assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                        () -> port.send(arena.allocate(255), to, 0xFFFF)).errno());
                assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                        () -> port.send(mad(arena, 1), null, 0xFFFF)).errno());
                assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                        () -> port.send(mad(arena, 1), to, 0x1FFFF)).errno());
                assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                        () -> port.receive(arena.allocate(100), new GsiPort.Source(), 0)).errno());
                assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                        () -> port.receive(arena.allocate(256), null, 0)).errno());
            }
            c.close();
            assertEquals(Errno.EBADF, assertThrows(VerbsException.class, () -> access.openGsi(1, 1)).errno());
        } finally {
            SoftDevices.remove(d);
        }
    }

    @Test
    void userQpsNeverGetQpn0Or1EvenWhenTheTableWraps() {
        Device d = SoftDevices.createLoopback(name("qpn"), new LoopbackFabric(), null);
        try (Context c = d.open()) {
            Hca hca = ((SoftContext) c).hca;
            ProtectionDomain pd = c.allocPd();
            CompletionQueue cq = c.createCq(8);
            List<QueuePair> qps = new ArrayList<>();
            hca.nextQpnHint(Gsi.QPN);
            qps.add(pd.createQp(new QpInitAttr(QpType.UD, cq, cq).cap(new QpCap(1, 1, 1, 1, 0))));
            hca.nextQpnHint(Hca.FIRST_QPN + Hca.MAX_QP - 2);
            for (int i = 0; i < 4; i++) {
                qps.add(pd.createQp(new QpInitAttr(QpType.UD, cq, cq).cap(new QpCap(1, 1, 1, 1, 0))));
            }
            boolean wrapped = false;
            for (QueuePair q : qps) {
                assertTrue(q.qpn() >= Hca.FIRST_QPN, "QPN 0x" + Integer.toHexString(q.qpn()));
                assertNotEquals(Gsi.QPN, q.qpn());
                wrapped |= q.qpn() == Hca.FIRST_QPN;
            }
            assertTrue(wrapped, "the table did not wrap to its first QPN");
            for (QueuePair q : qps) {
                q.close();
            }
            cq.close();
            pd.close();
        } finally {
            SoftDevices.remove(d);
        }
    }

    // ------------------------------------------------------------------ hostile datagrams

    /**
     * A third host (127.0.0.3, a plain UDP socket) sends random datagrams and forged RoCEv2 packets with
     * a right ICRC at port 4791 of a UDP device whose QP1 is open. The random ones never reach the queue;
     * the forged bad ones are dropped and counted by kind; a forged good MAD is delivered with the
     * forger's address as its Source (UD takes datagrams from anyone, as rxe's QP1 does); and the real
     * peer's MAD after all of that arrives intact, first in line.
     */
    @ParameterizedTest
    @EnumSource(value = UdpLink.Mode.class, names = {"AUTO", "CHANNEL"})
    void hostileDatagramsLoseNothing(UdpLink.Mode mode) throws Exception {
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        InetAddress evil = InetAddress.getByName("127.0.0.3");
        int port = SoftDevices.freeUdpPort(28791, ia, ib, evil);
        Device a = SoftDevices.createUdp(name("hostile-a"), ia, port, port, mode);
        Device b;
        try {
            b = SoftDevices.createUdp(name("hostile-b"), ib, port, port, mode);
        } catch (RuntimeException e) {
            SoftDevices.remove(a);
            throw e;
        }
        try (Arena arena = Arena.ofConfined(); Context ca = a.open(); Context cb = b.open(); GsiPort pa = open(ca);
             GsiPort pb = open(cb); DatagramChannel attacker = DatagramChannel.open()) {
            attacker.bind(new InetSocketAddress(evil, 0));
            InetSocketAddress victim = new InetSocketAddress(ib, port);
            Forger forger = new Forger(attacker, evil, victim);

            // a forged but well-formed MAD is a MAD: it arrives, from the forger's address
            MemorySegment forged = mad(arena, 40);
            forger.send(Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 0x77, forged, 256, true);
            receiveExpecting(pb, arena, forged, Gid.of(evil), 0x77);

            forger.send(Opcode.UD_SEND_ONLY, 0xFFFF, 0x0BAD_0000, 1, forged, 256, true);
            forger.send(Opcode.UD_SEND_ONLY, 0x1234, Gsi.QKEY, 1, forged, 256, true);
            forger.send(Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 1, forged, 24, true);
            forger.send(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE, 0xFFFF, Gsi.QKEY, 1, forged, 256, true);
            forger.send(Opcode.UD_SEND_ONLY, 0xFFFF, Gsi.QKEY, 1, forged, 256, false); // bad ICRC
            awaitCounter(cb, "bad_qkey_drops", 1);
            awaitCounter(cb, "bad_pkey_drops", 1);
            awaitCounter(cb, "gsi_length_drops", 1);
            awaitCounter(cb, "malformed_drops", 1);
            awaitCounter(cb, "udp_icrc_drops", 1);
            assertEquals(1L, counter(cb, "bad_qkey_drops"));
            assertEquals(1L, counter(cb, "bad_pkey_drops"));
            assertEquals(1L, counter(cb, "gsi_length_drops"));

            SplittableRandom random = new SplittableRandom(0x6517);
            byte[] junk = new byte[700];
            for (int i = 0; i < 3000; i++) {
                random.nextBytes(junk);
                if ((i & 1) == 0) { // half look like a MAD for QP1 at first sight
                    junk[0] = (byte) Opcode.UD_SEND_ONLY;
                    junk[1] = 0;
                    junk[5] = 0;
                    junk[6] = 0;
                    junk[7] = 1;
                }
                attacker.send(ByteBuffer.wrap(junk, 0, random.nextInt(junk.length + 1)), victim);
            }
            MemorySegment real = mad(arena, 41);
            pa.send(real, pb.localGid(), 0xFFFF);
            receiveExpecting(pb, arena, real, pa.localGid(), 1);
            assertFalse(pb.receive(arena.allocate(GsiPort.MAD_SIZE), new GsiPort.Source(), 0),
                    "junk reached the queue");
            // no exact drop counts after the junk: over IPv4 the ICRC check solves for the hidden
            // Identification, so 16 check bits remain and a random datagram passes it with probability
            // 2^-16 (Ipv4IcrcSolver); such a one is then dropped by the Q_Key, P_Key or length check
            assertEquals(0L, counter(cb, "gsi_overflow_drops"));
            // and the other way round still works
            MemorySegment back = mad(arena, 42);
            pb.send(back, pa.localGid(), 0xFFFF);
            receiveExpecting(pa, arena, back, pb.localGid(), 1);
        } finally {
            SoftDevices.remove(a);
            SoftDevices.remove(b);
        }
    }

    /** Builds RoCEv2 datagrams (BTH onward, ICRC over the IPv4 and UDP headers) for QPN 1 as a host at the attacker's address. */
    private static final class Forger {
        private final DatagramChannel channel;
        private final int source;
        private final int destination;
        private final int sourcePort;
        private final InetSocketAddress to;
        private final MemorySegment pseudo = MemorySegment.ofArray(new byte[Ipv4Header.LENGTH + UdpHeader.LENGTH]);
        private final Icrc icrc = new Icrc();

        Forger(DatagramChannel channel, InetAddress from, InetSocketAddress to) throws Exception {
            this.channel = channel;
            this.source = toInt(from.getAddress());
            this.destination = toInt(to.getAddress().getAddress());
            this.sourcePort = ((InetSocketAddress) channel.getLocalAddress()).getPort();
            this.to = to;
        }

        void send(int opcode, int pkey, int qkey, int srcQpn, MemorySegment payload, int payloadLength,
                  boolean goodIcrc) throws Exception {
            int hl = Opcode.headerLength(opcode);
            int pad = (4 - (payloadLength & 3)) & 3;
            int length = hl + payloadLength + pad + Icrc.LENGTH;
            MemorySegment p = MemorySegment.ofArray(new byte[length]);
            Bth.writeAt(p, 0, opcode, false, pad, pkey, Gsi.QPN, false, 0);
            Deth.writeAt(p, Opcode.offsetOf(opcode, Opcode.HEADER_DETH), qkey, srcQpn);
            MemorySegment.copy(payload, 0, p, hl, payloadLength);
            new Ipv4Header().wrap(pseudo, 0).writeUdp(0, Ipv4Header.LENGTH + UdpHeader.LENGTH + length, 0x4242, true,
                    64, source, destination);
            new UdpHeader().wrap(pseudo, Ipv4Header.LENGTH).write(sourcePort, to.getPort(), UdpHeader.LENGTH + length,
                    0);
            int crc = icrc.compute(pseudo, 0, p, 0, length);
            Icrc.write(p, length - Icrc.LENGTH, goodIcrc ? crc : crc ^ 0x400);
            channel.send(ByteBuffer.wrap(p.toArray(ValueLayout.JAVA_BYTE)), to);
        }

        private static int toInt(byte[] a) {
            return (a[0] & 0xFF) << 24 | (a[1] & 0xFF) << 16 | (a[2] & 0xFF) << 8 | (a[3] & 0xFF);
        }
    }
}
