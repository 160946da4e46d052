// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * QP-to-QP loopback on a UDP device (rxe_loopback): packets to the device's own address are handed
 * to its own receive path, never to the socket. Data moves both ways between two RC QPs of the
 * device (SEND, WRITE, READ), a QP connected to itself works, and a UD packet to the device's own
 * address shows the receiver the hop limit and traffic class it was sent with; no datagram is sent,
 * and every packet sent is received once. A link whose remote port is not its own shares its address
 * with the device at that port, so there a packet to the address goes out to that port.
 */
class UdpSelfAddressedTest {
    private static final long WAIT_NANOS = 5_000_000_000L;
    private static final int GID = 1;
    private static final int GRH = 40;
    private static final int ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"NATIVE, 127.0.0.1, 26511", "NATIVE, ::1, 26531", "CHANNEL, 127.0.0.1, 26551"})
    void packetsToTheDevicesOwnAddressStayInTheDevice(UdpLink.Mode mode, String address, int fromPort)
            throws Exception {
        Assumptions.assumeTrue(mode == UdpLink.Mode.CHANNEL || LinuxSockets.isAvailable(), "libc sockets");
        InetAddress local = InetAddress.getByName(address);
        int port = SoftDevices.freeUdpPort(fromPort, local);
        List<AutoCloseable> open = new ArrayList<>();
        Device device = null;
        try (Arena arena = Arena.ofShared()) {
            device = SoftDevices.createUdp("self-" + mode + "-" + port, local, port, port, mode);
            Context ctx = device.open();
            open.add(ctx);
            Gid self = ctx.queryGid(1, GID);
            ProtectionDomain pd = ctx.allocPd();
            open.add(pd);
            CompletionQueue cq = ctx.createCq(32);
            open.add(cq);
            MemoryRegion ma = pd.regMr(arena.allocate(4096, 8), ACCESS);
            MemoryRegion mb = pd.regMr(arena.allocate(4096, 8), ACCESS);
            open.add(ma);
            open.add(mb);
            QueuePair a = rc(pd, cq, open);
            QueuePair b = rc(pd, cq, open);
            QueuePair loop = rc(pd, cq, open);
            connect(a, self, b.qpn());
            connect(b, self, a.qpn());
            connect(loop, self, loop.qpn());
            Map<String, Long> before = ctx.counters(1);

            // SEND both ways
            fill(ma, 0, 100, 0x11);
            fill(mb, 0, 100, 0x22);
            b.postRecv(new RecvWorkRequest().wrId(10).sge(mb, 1024, 100));
            a.postRecv(new RecvWorkRequest().wrId(11).sge(ma, 1024, 100));
            a.postSend(send(1, WrOpcode.SEND).sge(ma, 0, 100));
            b.postSend(send(2, WrOpcode.SEND).sge(mb, 0, 100));
            expect(cq, 1, 2, 10, 11);
            assertBytes(mb, 1024, 100, 0x11, "A's SEND in B's receive");
            assertBytes(ma, 1024, 100, 0x22, "B's SEND in A's receive");

            // WRITE both ways (more than one MTU: 1500 bytes over path MTU 1024)
            fill(ma, 0, 1500, 0x33);
            fill(mb, 0, 1500, 0x44);
            a.postSend(send(3, WrOpcode.RDMA_WRITE).sge(ma, 0, 1500).rdma(mb.address() + 2048, mb.rkey()));
            b.postSend(send(4, WrOpcode.RDMA_WRITE).sge(mb, 0, 1500).rdma(ma.address() + 2048, ma.rkey()));
            expect(cq, 3, 4);
            assertBytes(mb, 2048, 1500, 0x33, "A's WRITE into B");
            assertBytes(ma, 2048, 1500, 0x44, "B's WRITE into A");

            // READ both ways
            fill(ma, 0, 1200, 0x55);
            fill(mb, 0, 1200, 0x66);
            a.postSend(send(5, WrOpcode.RDMA_READ).sge(ma, 2048, 1200).rdma(mb.address(), mb.rkey()));
            b.postSend(send(6, WrOpcode.RDMA_READ).sge(mb, 2048, 1200).rdma(ma.address(), ma.rkey()));
            expect(cq, 5, 6);
            assertBytes(ma, 2048, 1200, 0x66, "A read B");
            assertBytes(mb, 2048, 1200, 0x55, "B read A");

            // a QP connected to itself
            fill(ma, 0, 64, 0x77);
            loop.postRecv(new RecvWorkRequest().wrId(12).sge(ma, 3072, 64));
            loop.postSend(send(7, WrOpcode.SEND).sge(ma, 0, 64));
            expect(cq, 7, 12);
            assertBytes(ma, 3072, 64, 0x77, "the self-connected QP's SEND");

            // UD to a QP of the same device: the GRH area shows what the packet was sent with
            CompletionQueue ucq = ctx.createCq(8);
            open.add(ucq);
            QueuePair u1 = ud(pd, ucq, open);
            QueuePair u2 = ud(pd, ucq, open);
            AddressHandle ah = pd.createAh(new AhAttr(new GlobalRoute(self, 0, GID, 5, 0x48), 0, 0, 0, 0, 1));
            open.add(ah);
            fill(ma, 0, 16, 0x0D);
            u2.postRecv(new RecvWorkRequest().wrId(20).sge(mb, 0, GRH + 16));
            u1.postSend(send(21, WrOpcode.SEND).sge(ma, 0, 16).ud(ah, u2.qpn(), 0x1234));
            WorkCompletion[] wcs = expect(ucq, 20, 21);
            WorkCompletion r = wcs[0].wrId() == 20 ? wcs[0] : wcs[1];
            assertEquals(GRH + 16, r.byteLen());
            assertEquals(u1.qpn(), r.srcQp());
            assertBytes(mb, GRH, 16, 0x0D, "the UD payload");
            AhAttr back = AhAttr.fromWc(ctx, 1, r, mb.segment().asSlice(0, GRH));
            assertEquals(self, back.grh().dgid(), "the source is the device's own address");
            assertEquals(5, back.grh().hopLimit(), "hop limit as sent (no router in between)");
            assertEquals(0x48, back.grh().trafficClass(), "traffic class as sent");

            Map<String, Long> after = ctx.counters(1);
            long sent = delta(before, after, "sent_pkts");
            assertTrue(sent >= 14, "packets sent: " + after);
            assertEquals(sent, delta(before, after, "rcvd_pkts"), "every packet sent was received once: " + after);
            assertEquals(sent, delta(before, after, "udp_self_delivered_packets"), after::toString);
            assertEquals(0L, after.get("udp_sent_datagrams"), "nothing went out of the socket");
            assertEquals(0L, after.get("udp_icrc_drops"), "the looped packets carry a right ICRC");
            assertEquals(0L, after.get("udp_malformed_drops"));
        } finally {
            for (int i = open.size() - 1; i >= 0; i--) {
                open.get(i).close();
            }
            if (device != null) {
                SoftDevices.remove(device);
            }
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"NATIVE, ::1, 26571", "CHANNEL, 127.0.0.1, 26591"})
    void onAnAddressSharedByPortAPacketToItGoesToTheRemotePort(UdpLink.Mode mode, String address, int fromPort)
            throws Exception {
        Assumptions.assumeTrue(mode == UdpLink.Mode.CHANNEL || LinuxSockets.isAvailable(), "libc sockets");
        InetAddress local = InetAddress.getByName(address);
        int port = SoftDevices.freeUdpPort(fromPort, local);
        int remotePort = SoftDevices.freeUdpPort(port + 1, local);
        List<AutoCloseable> open = new ArrayList<>();
        Device device = null;
        try (DatagramChannel peer = DatagramChannel.open();
             Selector selector = Selector.open();
             Arena arena = Arena.ofShared()) {
            // Stands for the other device on this address (the udp6 conformance pair).
            peer.bind(new InetSocketAddress(local, remotePort));
            peer.configureBlocking(false);
            peer.register(selector, SelectionKey.OP_READ);
            device = SoftDevices.createUdp("shared-" + mode + "-" + port, local, port, remotePort, mode);
            Context ctx = device.open();
            open.add(ctx);
            ProtectionDomain pd = ctx.allocPd();
            open.add(pd);
            CompletionQueue cq = ctx.createCq(8);
            open.add(cq);
            MemoryRegion mr = pd.regMr(arena.allocate(4096, 8), ACCESS);
            open.add(mr);
            QueuePair u = ud(pd, cq, open);
            AddressHandle ah = pd.createAh(AhAttr.roce(ctx.queryGid(1, GID), GID));
            open.add(ah);
            u.postSend(send(1, WrOpcode.SEND).sge(mr, 0, 16).ud(ah, 0x11, 0x1234));
            expect(cq, 1);
            assertEquals(1, selector.select(5_000), "the datagram reached the remote port");
            ByteBuffer got = ByteBuffer.allocate(8192);
            assertTrue(peer.receive(got) != null);
            assertEquals(12 + 8 + 16 + 4, got.position(), "BTH, DETH, payload, ICRC");
            Map<String, Long> c = ctx.counters(1);
            assertEquals(1L, c.get("udp_sent_datagrams"), c::toString);
            assertEquals(0L, c.get("udp_self_delivered_packets"), c::toString);
        } finally {
            for (int i = open.size() - 1; i >= 0; i--) {
                open.get(i).close();
            }
            if (device != null) {
                SoftDevices.remove(device);
            }
        }
    }

    private static QueuePair rc(ProtectionDomain pd, CompletionQueue cq, List<AutoCloseable> open) {
        QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(8, 8, 1, 1, 0)));
        open.add(qp);
        return qp;
    }

    private static QueuePair ud(ProtectionDomain pd, CompletionQueue cq, List<AutoCloseable> open) {
        QueuePair qp = pd.createQp(new QpInitAttr(QpType.UD, cq, cq).cap(new QpCap(8, 8, 1, 1, 0)));
        open.add(qp);
        qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).qkey(0x1234),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY);
        qp.modify(new QpAttr().state(QpState.RTR), QpAttrMask.STATE);
        qp.modify(new QpAttr().state(QpState.RTS).sqPsn(0), QpAttrMask.STATE | QpAttrMask.SQ_PSN);
        return qp;
    }

    private static void connect(QueuePair qp, Gid dgid, int destQpn) {
        qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(ACCESS),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        qp.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.MTU_1024).destQpNum(destQpn).rqPsn(0)
                        .ahAttr(AhAttr.roce(dgid, GID)).maxDestRdAtomic(1).minRnrTimer(1),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        // No retries: a packet that left by the socket would end the work request in error.
        qp.modify(new QpAttr().state(QpState.RTS).sqPsn(0).timeout(14).retryCnt(0).rnrRetry(0).maxRdAtomic(1),
                QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT
                        | QpAttrMask.RNR_RETRY | QpAttrMask.MAX_QP_RD_ATOMIC);
    }

    private static SendWorkRequest send(long wrId, WrOpcode op) {
        return new SendWorkRequest().wrId(wrId).opcode(op).flags(SendFlag.SIGNALED);
    }

    /** Polls until completions for exactly the given work requests arrived, all successful. */
    private static WorkCompletion[] expect(CompletionQueue cq, long... wrIds) {
        WorkCompletion[] got = new WorkCompletion[wrIds.length];
        WorkCompletion[] one = WorkCompletion.array(1);
        long end = System.nanoTime() + WAIT_NANOS;
        for (int n = 0; n < wrIds.length; ) {
            if (cq.poll(one) == 1) {
                WorkCompletion wc = one[0];
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                boolean expected = false;
                for (long id : wrIds) {
                    expected |= id == wc.wrId();
                }
                assertTrue(expected, () -> "unexpected completion " + wc);
                got[n++] = wc;
                one = WorkCompletion.array(1); // keep wc as it is
            } else {
                assertTrue(System.nanoTime() < end, "no completion within 5 s");
                Thread.onSpinWait();
            }
        }
        return got;
    }

    private static void fill(MemoryRegion mr, long at, int length, int value) {
        mr.segment().asSlice(at, length).fill((byte) value);
    }

    private static void assertBytes(MemoryRegion mr, long at, int length, int value, String what) {
        MemorySegment s = mr.segment();
        for (int i = 0; i < length; i++) {
            assertEquals((byte) value, s.get(ValueLayout.JAVA_BYTE, at + i), what + ", byte " + i);
        }
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String name) {
        return after.getOrDefault(name, 0L) - before.getOrDefault(name, 0L);
    }
}
