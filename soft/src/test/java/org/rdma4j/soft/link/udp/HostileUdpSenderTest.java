// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Ipv4Header;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Reth;
import org.rdma4j.soft.wire.UdpHeader;
import org.rdma4j.verbs.*;

/**
 * A third host on the loopback network (127.0.0.3, a plain UDP socket) forges well-formed RoCEv2
 * packets, with the right QPN, the exact PSN the victim expects next and an ICRC that is right for
 * its own address, at an RC or UC QP connected between two soft UDP devices (127.0.0.1 and
 * 127.0.0.2). Only the connected peer speaks for a connection: the forgeries are dropped before the
 * transport sees them and counted as {@code rcvd_bad_addr_drops}; they change no memory, consume no
 * receive, take no PSN and cannot move the QP to ERR. A forgery with a wrong ICRC is counted as
 * {@code udp_icrc_drops} instead (the IPv4 ICRC is checked although the socket hides the
 * Identification; in raw mode the real peer's packets carry a non-zero one).
 */
class HostileUdpSenderTest {
    private static final long WAIT_NANOS = 5_000_000_000L;
    private static final int ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE;
    private static int nextName;

    static Stream<Arguments> setups() {
        return Stream.of(Arguments.of(QpType.RC, UdpLink.Mode.AUTO), Arguments.of(QpType.UC, UdpLink.Mode.AUTO),
                Arguments.of(QpType.RC, UdpLink.Mode.CHANNEL), Arguments.of(QpType.UC, UdpLink.Mode.CHANNEL),
                Arguments.of(QpType.RC, UdpLink.Mode.RAW_IPV4));
    }

    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("setups")
    void onlyTheConnectedPeerSpeaksForTheConnection(QpType type, UdpLink.Mode mode) throws Exception {
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        InetAddress evil = InetAddress.getByName("127.0.0.3");
        int port = SoftDevices.freeUdpPort(26791, ia, ib, evil);
        int n = ++nextName;
        Device a = create("hostile-a" + n, ia, port, mode);
        Device b;
        try {
            b = create("hostile-b" + n, ib, port, mode);
        } catch (RuntimeException e) {
            SoftDevices.remove(a);
            throw e;
        }
        Throwable failure = null;
        try (Arena arena = Arena.ofShared(); Context ca = a.open(); Context cb = b.open();
             DatagramChannel attacker = DatagramChannel.open()) {
            attacker.bind(new InetSocketAddress(evil, 0));
            Side sa = new Side(ca, arena, type);
            Side sb = new Side(cb, arena, type);
            connect(sa, sb, ca.queryGid(1, 1), cb.queryGid(1, 1));
            InetSocketAddress victim = new InetSocketAddress(ib, port);
            Forger forger = new Forger(attacker, evil, victim, sb.qp.qpn());
            int ucBase = type == QpType.UC ? Opcode.UC_SEND_FIRST : 0;

            // A real message first, so the expected PSN is not just the initial one.
            sb.qp.postRecv(new RecvWorkRequest().wrId(1).sge(sb.mr, 0, 64));
            sa.fill((byte) 0x11);
            sa.qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                    .sge(sa.mr, 0, 32));
            assertEquals(WcStatus.SUCCESS, poll(sa.cq).status());
            assertEquals(32, poll(sb.cq).byteLen());
            int nextPsn = 1;

            // (a) a forged SEND at the expected PSN is not delivered
            sb.qp.postRecv(new RecvWorkRequest().wrId(2).sge(sb.mr, 1024, 64));
            byte[] before = sb.bytes();
            forger.send(ucBase + Opcode.RC_SEND_ONLY, nextPsn, null, 0, 0, (byte) 0x66, 48, true);
            awaitCounter(cb, "rcvd_bad_addr_drops", 1);
            assertArrayEquals(before, sb.bytes(), "a forged SEND changed the receive buffer");
            assertNull(tryPoll(sb.cq), "a forged SEND completed a receive");
            // (b) ... and the real peer's message with that PSN is delivered normally
            sa.fill((byte) 0x22);
            sa.qp.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                    .sge(sa.mr, 0, 40));
            assertEquals(WcStatus.SUCCESS, poll(sa.cq).status());
            WorkCompletion got = poll(sb.cq);
            assertEquals(2L, got.wrId(), "the receive went to the real message");
            assertEquals(40, got.byteLen());
            assertEquals((byte) 0x22, sb.mr.segment().get(ValueLayout.JAVA_BYTE, 1024));
            assertEquals((byte) 0x22, sb.mr.segment().get(ValueLayout.JAVA_BYTE, 1024 + 39));
            assertEquals(0L, cb.counters(1).get("duplicate_request"), "the real message was no duplicate");
            nextPsn++;

            // a forged WRITE with the right rkey at the expected PSN changes nothing
            before = sb.bytes();
            forger.send(ucBase + Opcode.RC_RDMA_WRITE_ONLY, nextPsn, sb.mr.address() + 2048, sb.mr.rkey(), 64,
                    (byte) 0x66, 64, true);
            awaitCounter(cb, "rcvd_bad_addr_drops", 2);
            // (c) a forged WRITE with a bad rkey does not move the QP to ERR
            forger.send(ucBase + Opcode.RC_RDMA_WRITE_ONLY, nextPsn, sb.mr.address(), sb.mr.rkey() ^ 0x100, 64,
                    (byte) 0x66, 64, true);
            awaitCounter(cb, "rcvd_bad_addr_drops", 3);
            assertArrayEquals(before, sb.bytes(), "forged writes changed the target memory");
            assertEquals(QpState.RTS, sb.qp.state());
            assertNull(tryPoll(sb.cq), "no completion from a forgery");

            // the real peer's WRITE with that PSN still lands
            sa.fill((byte) 0x33);
            sa.qp.postSend(new SendWorkRequest().wrId(3).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                    .sge(sa.mr, 0, 64).rdma(sb.mr.address() + 2048, sb.mr.rkey()));
            assertEquals(WcStatus.SUCCESS, poll(sa.cq).status());
            awaitByte(sb.mr.segment(), 2048 + 63, (byte) 0x33);

            // a forgery with a wrong ICRC is caught by the ICRC check before the address check
            long icrcDrops = cb.counters(1).get("udp_icrc_drops");
            assertEquals(0L, icrcDrops, "real and forged-but-sealed IPv4 packets pass the ICRC check");
            forger.send(ucBase + Opcode.RC_SEND_ONLY, nextPsn + 1, null, 0, 0, (byte) 0x66, 16, false);
            awaitCounter(cb, "udp_icrc_drops", icrcDrops + 1);
            // (d) each forgery was counted once, and no other drop counter moved
            assertEquals(3L, cb.counters(1).get("rcvd_bad_addr_drops"));
            assertEquals(0L, cb.counters(1).get("malformed_drops"));
            assertEquals(0L, ca.counters(1).get("rcvd_bad_addr_drops"));
            assertEquals(QpState.RTS, sb.qp.state());
            sa.close();
            sb.close();
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            // After a failed assertion the contexts still hold their QPs and cannot close: the devices'
            // removal then fails too (EBUSY), and that must not hide the assertion.
            remove(a, failure);
            remove(b, failure);
        }
    }

    /** Removes {@code d}; a failure is thrown, or attached to the test's own failure if there is one. */
    private static void remove(Device d, Throwable failure) {
        try {
            SoftDevices.remove(d);
        } catch (RuntimeException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        }
    }

    /** A UDP device; raw mode (its packets carry a real, non-zero IP Identification) needs CAP_NET_RAW. */
    private static Device create(String name, InetAddress bind, int port, UdpLink.Mode mode) {
        try {
            return SoftDevices.createUdp(name, bind, port, port, mode);
        } catch (VerbsException e) {
            Assumptions.assumeTrue(mode != UdpLink.Mode.RAW_IPV4, "raw sockets unavailable: " + e.getMessage());
            throw e;
        }
    }

    /** One side's resources. */
    private static final class Side {
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion mr;

        Side(Context ctx, Arena arena, QpType type) {
            pd = ctx.allocPd();
            cq = ctx.createCq(16);
            qp = pd.createQp(new QpInitAttr(type, cq, cq).cap(new QpCap(8, 8, 1, 1, 0)));
            mr = pd.regMr(arena.allocate(4096, 8), ACCESS);
        }

        void fill(byte b) {
            mr.segment().asSlice(0, 256).fill(b);
        }

        byte[] bytes() {
            return mr.segment().toArray(ValueLayout.JAVA_BYTE);
        }

        void close() {
            qp.close();
            mr.close();
            cq.close();
            pd.close();
        }
    }

    private static void connect(Side a, Side b, Gid ga, Gid gb) {
        bringUp(a.qp, gb, b.qp.qpn());
        bringUp(b.qp, ga, a.qp.qpn());
    }

    private static void bringUp(QueuePair q, Gid peer, int peerQpn) {
        boolean rc = q.type() == QpType.RC;
        q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(Access.REMOTE_WRITE),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        QpAttr r = new QpAttr().state(QpState.RTR).pathMtu(Mtu.MTU_1024).destQpNum(peerQpn).rqPsn(0)
                .ahAttr(AhAttr.roce(peer, 1));
        int rtr = QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN;
        if (rc) {
            r.maxDestRdAtomic(1).minRnrTimer(1);
            rtr |= QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER;
        }
        q.modify(r, rtr);
        QpAttr s = new QpAttr().state(QpState.RTS).sqPsn(0);
        int rts = QpAttrMask.STATE | QpAttrMask.SQ_PSN;
        if (rc) {
            s.timeout(14).retryCnt(7).rnrRetry(7).maxRdAtomic(1);
            rts |= QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT | QpAttrMask.RNR_RETRY | QpAttrMask.MAX_QP_RD_ATOMIC;
        }
        q.modify(s, rts);
    }

    /** Builds RoCEv2 datagrams (BTH onward) the way a RoCE sender at the attacker's address would. */
    private static final class Forger {
        private final DatagramChannel channel;
        private final int source;
        private final int destination;
        private final int sourcePort;
        private final InetSocketAddress to;
        private final int qpn;
        private final MemorySegment pseudo = MemorySegment.ofArray(new byte[Ipv4Header.LENGTH + UdpHeader.LENGTH]);
        private final Icrc icrc = new Icrc();

        Forger(DatagramChannel channel, InetAddress from, InetSocketAddress to, int qpn) throws Exception {
            this.channel = channel;
            this.source = toInt(from.getAddress());
            this.destination = toInt(to.getAddress().getAddress());
            this.sourcePort = ((InetSocketAddress) channel.getLocalAddress()).getPort();
            this.to = to;
            this.qpn = qpn;
        }

        /** Sends one packet; {@code va != null} adds a RETH. {@code goodIcrc} false flips the ICRC. */
        void send(int opcode, int psn, Long va, int rkey, int dmaLength, byte fill, int payload, boolean goodIcrc)
                throws Exception {
            int hl = Opcode.headerLength(opcode);
            int pad = (4 - (payload & 3)) & 3;
            int length = hl + payload + pad + Icrc.LENGTH;
            MemorySegment p = MemorySegment.ofArray(new byte[length]);
            new Bth().wrap(p, 0).write(opcode, false, pad, 0xFFFF, qpn, true, psn);
            if (va != null) {
                new Reth().wrap(p, Opcode.offsetOf(opcode, Opcode.HEADER_RETH)).virtualAddress(va).rkey(rkey)
                        .dmaLength(dmaLength);
            }
            p.asSlice(hl, payload).fill(fill);
            new Ipv4Header().wrap(pseudo, 0).writeUdp(0, Ipv4Header.LENGTH + UdpHeader.LENGTH + length, 0x4242, true,
                    64, source, destination);
            new UdpHeader().wrap(pseudo, Ipv4Header.LENGTH).write(sourcePort, to.getPort(), UdpHeader.LENGTH + length, 0);
            int crc = icrc.compute(pseudo, 0, p, 0, length);
            Icrc.write(p, length - Icrc.LENGTH, goodIcrc ? crc : crc ^ 0x400);
            channel.send(ByteBuffer.wrap(p.toArray(ValueLayout.JAVA_BYTE)), to);
        }

        private static int toInt(byte[] a) {
            return (a[0] & 0xFF) << 24 | (a[1] & 0xFF) << 16 | (a[2] & 0xFF) << 8 | (a[3] & 0xFF);
        }
    }

    private static void awaitCounter(Context ctx, String name, long atLeast) throws InterruptedException {
        long end = System.nanoTime() + WAIT_NANOS;
        while (ctx.counters(1).get(name) < atLeast) {
            assertTrue(System.nanoTime() < end, name + " did not reach " + atLeast + ": " + ctx.counters(1));
            Thread.sleep(1);
        }
    }

    private static void awaitByte(MemorySegment s, long at, byte expected) throws InterruptedException {
        long end = System.nanoTime() + WAIT_NANOS;
        while (s.get(ValueLayout.JAVA_BYTE, at) != expected) {
            assertTrue(System.nanoTime() < end, "byte " + at + " never became " + expected);
            Thread.sleep(1);
        }
    }

    private static WorkCompletion tryPoll(CompletionQueue cq) {
        WorkCompletion[] wc = WorkCompletion.array(1);
        return cq.poll(wc) == 1 ? wc[0] : null;
    }

    private static WorkCompletion poll(CompletionQueue cq) throws InterruptedException {
        long end = System.nanoTime() + WAIT_NANOS;
        WorkCompletion wc;
        while ((wc = tryPoll(cq)) == null) {
            assertTrue(System.nanoTime() < end, "no completion within 5 s");
            Thread.onSpinWait();
        }
        assertNotNull(wc);
        return wc;
    }
}
