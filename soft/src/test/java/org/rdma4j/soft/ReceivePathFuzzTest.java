// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.*;

/**
 * Hostile input: over a million random and mutated packets (well-formed headers with random fields, bit
 * flips, random lengths, truncations) thrown at a live device with RC, UC and UD QPs and registered
 * memory open to remote access, plus random datagrams at a UDP device's socket. Afterwards every
 * registered buffer must be byte-for-byte unchanged and the device must still work.
 */
class ReceivePathFuzzTest {
    private static final int IN_PROCESS_PACKETS = 1_000_000;
    private static final int DATAGRAMS = 50_000;
    private static final long TIME_LIMIT_NANOS = 120_000_000_000L;

    private record Target(Context ctx, ProtectionDomain pd, CompletionQueue cq, List<QueuePair> qps,
                          List<MemoryRegion> mrs, List<byte[]> snapshots, ProtectionDomain peerPd,
                          CompletionQueue peerCq, List<QueuePair> peerQps) {
    }

    private static final int ALL = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ
            | Access.REMOTE_ATOMIC | Access.MW_BIND;

    @Test
    void millionHostilePacketsChangeNoMemoryAndTheDeviceStillWorks() throws Exception {
        LoopbackFabric fabric = new LoopbackFabric();
        Device victim = SoftDevices.createLoopback("fuzz-victim", fabric, null);
        Device peer = SoftDevices.createLoopback("fuzz-peer", fabric, null);
        try (Arena arena = Arena.ofShared(); Context pc = peer.open()) {
            Target t = target(victim, pc, arena);
            Hca hca = ((SoftDevice) victim).hca;
            SplittableRandom random = new SplittableRandom(0xF022);
            PacketPool pool = new PacketPool();
            int[] qpns = t.qps().stream().mapToInt(QueuePair::qpn).toArray();
            Gid[] sources = {pc.queryGid(1, 1), pc.queryGid(1, 0), Gid.parse("::1"), null};
            Gid victimGid = t.ctx().queryGid(1, 1);
            long deadline = System.nanoTime() + TIME_LIMIT_NANOS;
            int sent = 0;
            for (; sent < IN_PROCESS_PACKETS && System.nanoTime() < deadline; sent++) {
                Packet p = pool.acquire();
                int total = mutate(p.buffer, random, qpns);
                int hl = random.nextInt(10) == 0 ? random.nextInt(Packet.MAX_HEADER + 1)
                        : Math.max(0, Opcode.headerLength(p.buffer.get(ValueLayout.JAVA_BYTE, 0) & 0xFF));
                p.headerLength = Math.min(hl, total);
                p.setFlatPayload(Math.min(Packet.MAX_PAYLOAD, total - p.headerLength));
                p.srcGid = sources[random.nextInt(sources.length)];
                p.dstGid = victimGid;
                hca.receive(p);
                if ((sent & 0xFFFF) == 0) {
                    reviveQps(t, pc); // errors move QPs to ERR; bring them back so fuzzing reaches the engine
                }
            }
            assertEquals(IN_PROCESS_PACKETS, sent, "the in-process fuzz ran out of time");
            assertUnchanged(t);
            Thread.sleep(50); // timers the fuzz armed on the peer may fire; nothing may change
            assertUnchanged(t);
            proveItWorks(victim, pc, arena);
            assertUnchanged(t);
            Context v = t.ctx();
            long drops = v.counters(1).get("malformed_drops") + v.counters(1).get("unknown_qpn_drops")
                    + v.counters(1).get("rcvd_bad_addr_drops")
                    + v.counters(1).get("out_of_seq_request") + v.counters(1).get("duplicate_request")
                    + v.counters(1).get("bad_pkey_drops") + v.counters(1).get("bad_qkey_drops");
            assertTrue(drops > IN_PROCESS_PACKETS / 2, "hostile packets are dropped and counted: " + v.counters(1));
            close(t);
        } finally {
            SoftDevices.remove(victim);
            SoftDevices.remove(peer);
        }
    }

    @Test
    void randomDatagramsAtAUdpDeviceChangeNoMemoryAndItStillWorks() throws Exception {
        InetAddress la = InetAddress.getByName("127.0.0.1");
        InetAddress lb = InetAddress.getByName("127.0.0.2");
        int port = SoftDevices.freeUdpPort(25901, la, lb);
        Device victim = SoftDevices.createUdp("fuzz-udp-victim", la, port, port, UdpLink.Mode.AUTO);
        Device peer = SoftDevices.createUdp("fuzz-udp-peer", lb, port, port, UdpLink.Mode.AUTO);
        try (Arena arena = Arena.ofShared(); Context pc = peer.open();
             DatagramChannel attacker = DatagramChannel.open()) {
            attacker.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.3"), 0));
            Target t = target(victim, pc, arena);
            int[] qpns = t.qps().stream().mapToInt(QueuePair::qpn).toArray();
            SplittableRandom random = new SplittableRandom(0xDA7A);
            MemorySegment scratch = arena.allocate(Packet.BUFFER_SIZE + 64, 8);
            ByteBuffer view = scratch.asByteBuffer();
            InetSocketAddress to = new InetSocketAddress(la, port);
            for (int i = 0; i < DATAGRAMS; i++) {
                int len = mutate(scratch, random, qpns);
                view.clear().limit(Math.min(len + random.nextInt(8), view.capacity()));
                attacker.send(view, to);
                if ((i & 0x3FFF) == 0) {
                    reviveQps(t, pc);
                }
            }
            Thread.sleep(300); // let the receive thread drain its socket
            assertUnchanged(t);
            proveItWorks(victim, pc, arena);
            assertUnchanged(t);
            close(t);
        } finally {
            SoftDevices.remove(victim);
            SoftDevices.remove(peer);
        }
    }

    /** RC, UC and UD QPs in RTS, no receives posted, and remotely accessible memory full of a pattern. */
    private static Target target(Device victim, Context peer, Arena arena) {
        Context ctx = victim.open();
        ProtectionDomain pd = ctx.allocPd();
        CompletionQueue cq = ctx.createCq(4096);
        ProtectionDomain ppd = peer.allocPd();
        CompletionQueue pcq = peer.createCq(4096);
        List<QueuePair> qps = new ArrayList<>();
        List<QueuePair> peerQps = new ArrayList<>();
        for (QpType type : new QpType[] {QpType.RC, QpType.RC, QpType.UC, QpType.UD}) {
            QueuePair q = pd.createQp(new QpInitAttr(type, cq, cq).cap(new QpCap(16, 16, 2, 2, 0)));
            QueuePair pq = ppd.createQp(new QpInitAttr(type, pcq, pcq).cap(new QpCap(16, 16, 2, 2, 0)));
            Connect.bringUp(q, type, peer.queryGid(1, 1), pq.qpn());
            Connect.bringUp(pq, type, ctx.queryGid(1, 1), q.qpn());
            qps.add(q);
            peerQps.add(pq);
        }
        List<MemoryRegion> mrs = new ArrayList<>();
        List<byte[]> snapshots = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            MemorySegment s = arena.allocate(16384 << i, 8);
            for (long j = 0; j < s.byteSize(); j++) {
                s.set(ValueLayout.JAVA_BYTE, j, (byte) (j * 13 + i));
            }
            mrs.add(pd.regMr(s, ALL));
            snapshots.add(s.toArray(ValueLayout.JAVA_BYTE));
        }
        return new Target(ctx, pd, cq, qps, mrs, snapshots, ppd, pcq, peerQps);
    }

    /**
     * Writes a hostile packet: mostly a well-formed header for a random valid opcode addressed to one of
     * the QPs, with random PSN, keys, addresses and lengths, then a few flipped bits; sometimes pure noise.
     * Returns the length.
     */
    private static int mutate(MemorySegment b, SplittableRandom r, int[] qpns) {
        int total = r.nextInt(12, Packet.MAX_HEADER + Packet.MAX_PAYLOAD);
        if (r.nextInt(8) == 0) {
            total = r.nextInt(0, 40);
        }
        for (int i = 0; i < total; i += 8) {
            b.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        if (r.nextInt(5) != 0) {
            int op;
            do {
                op = r.nextInt(256);
            } while (!Opcode.isValid(op));
            int qpn = r.nextInt(10) == 0 ? r.nextInt(1 << 24) : qpns[r.nextInt(qpns.length)];
            int psn = r.nextInt(4) == 0 ? r.nextInt(1 << 24) : r.nextInt(64);
            new Bth().wrap(b, 0).write(op, r.nextBoolean(), r.nextInt(4), r.nextInt(20) == 0 ? r.nextInt(1 << 16)
                    : 0xFFFF, qpn, r.nextBoolean(), psn);
            if (r.nextBoolean()) {
                // plausible lengths and addresses in RETH/AtomicETH-shaped bytes
                b.set(ValueLayout.JAVA_INT_UNALIGNED, 24, r.nextInt(8192));
            }
            total = Math.max(total, Opcode.headerLength(op));
            for (int flips = r.nextInt(3); flips > 0; flips--) {
                int at = r.nextInt(total);
                b.set(ValueLayout.JAVA_BYTE, at, (byte) (b.get(ValueLayout.JAVA_BYTE, at) ^ (1 << r.nextInt(8))));
            }
        }
        return total;
    }

    private static void reviveQps(Target t, Context peer) {
        for (QueuePair q : t.qps()) {
            if (q.state() == QpState.ERR) {
                q.modify(new QpAttr().state(QpState.RESET), QpAttrMask.STATE);
                Connect.bringUp(q, q.type(), peer.queryGid(1, 1), 0x11);
            }
        }
    }

    private static void assertUnchanged(Target t) {
        for (int i = 0; i < t.mrs().size(); i++) {
            MemorySegment s = t.mrs().get(i).segment();
            long mismatch = s.mismatch(MemorySegment.ofArray(t.snapshots().get(i)));
            assertEquals(-1L, mismatch, "registered buffer " + i + " changed at offset " + mismatch);
        }
    }

    /** A fresh RC pair on the fuzzed device still does SEND, WRITE, READ and FETCH_ADD. */
    private static void proveItWorks(Device victim, Context peer, Arena arena) {
        try (Context ctx = victim.open()) {
            ProtectionDomain pd = ctx.allocPd();
            ProtectionDomain ppd = peer.allocPd();
            CompletionQueue cq = ctx.createCq(16);
            CompletionQueue pcq = peer.createCq(16);
            QueuePair q = pd.createQp(new QpInitAttr(QpType.RC, cq, cq));
            QueuePair pq = ppd.createQp(new QpInitAttr(QpType.RC, pcq, pcq));
            Connect.bringUp(q, QpType.RC, peer.queryGid(1, 1), pq.qpn());
            Connect.bringUp(pq, QpType.RC, ctx.queryGid(1, 1), q.qpn());
            MemoryRegion local = pd.regMr(arena.allocate(4096, 8), ALL);
            MemoryRegion remote = ppd.regMr(arena.allocate(4096, 8), ALL);
            local.segment().fill((byte) 0x42);
            pq.postRecv(new RecvWorkRequest().wrId(1).sge(remote, 0, 1024));
            q.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED).sge(local, 0, 100));
            assertEquals(WcStatus.SUCCESS, Connect.poll(cq).status());
            assertEquals(100, Connect.poll(pcq).byteLen());
            q.postSend(new SendWorkRequest().wrId(3).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                    .sge(local, 0, 2000).rdma(remote.address() + 2048, remote.rkey()));
            assertEquals(WcStatus.SUCCESS, Connect.poll(cq).status());
            assertEquals((byte) 0x42, remote.segment().get(ValueLayout.JAVA_BYTE, 4047));
            q.postSend(new SendWorkRequest().wrId(4).opcode(WrOpcode.RDMA_READ).flags(SendFlag.SIGNALED)
                    .sge(local, 1000, 100).rdma(remote.address(), remote.rkey()));
            assertEquals(WcStatus.SUCCESS, Connect.poll(cq).status());
            q.postSend(new SendWorkRequest().wrId(5).flags(SendFlag.SIGNALED)
                    .fetchAdd(remote.address() + 8, remote.rkey(), 1).sge(local, 8, 8));
            assertEquals(WcStatus.SUCCESS, Connect.poll(cq).status());
            q.close();
            pq.close();
            local.close();
            remote.close();
            cq.close();
            pcq.close();
            pd.close();
            ppd.close();
        }
    }

    private static void close(Target t) {
        for (QueuePair q : t.qps()) {
            q.close();
        }
        for (MemoryRegion m : t.mrs()) {
            m.close();
        }
        for (QueuePair q : t.peerQps()) {
            q.close();
        }
        t.cq().close();
        t.pd().close();
        t.ctx().close();
        t.peerCq().close();
        t.peerPd().close();
    }

    /** Minimal QP bring-up for these tests. */
    static final class Connect {
        static void bringUp(QueuePair q, QpType type, Gid peer, int peerQpn) {
            bringUp(q, type, peer, peerQpn, 7, 7);
        }

        /** As above, with the RC QP's retry count and RNR retry count given (timeout 14, 67 ms). */
        static void bringUp(QueuePair q, QpType type, Gid peer, int peerQpn, int retryCnt, int rnrRetry) {
            int access = Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC;
            if (type == QpType.UD) {
                q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).qkey(0x1234),
                        QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY);
                q.modify(new QpAttr().state(QpState.RTR), QpAttrMask.STATE);
                q.modify(new QpAttr().state(QpState.RTS).sqPsn(0), QpAttrMask.STATE | QpAttrMask.SQ_PSN);
                return;
            }
            q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(type == QpType.UC
                    ? Access.REMOTE_WRITE : access),
                    QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
            int rtr = QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN;
            int rts = QpAttrMask.STATE | QpAttrMask.SQ_PSN;
            QpAttr a = new QpAttr().state(QpState.RTR).pathMtu(Mtu.MTU_1024).destQpNum(peerQpn).rqPsn(0)
                    .ahAttr(AhAttr.roce(peer, 1));
            if (type == QpType.RC) {
                a.maxDestRdAtomic(4).minRnrTimer(1);
                rtr |= QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER;
            }
            q.modify(a, rtr);
            QpAttr b = new QpAttr().state(QpState.RTS).sqPsn(0);
            if (type == QpType.RC) {
                b.timeout(14).retryCnt(retryCnt).rnrRetry(rnrRetry).maxRdAtomic(4);
                rts |= QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT | QpAttrMask.RNR_RETRY | QpAttrMask.MAX_QP_RD_ATOMIC;
            }
            q.modify(b, rts);
        }

        static WorkCompletion poll(CompletionQueue cq) {
            WorkCompletion[] wc = WorkCompletion.array(1);
            long end = System.nanoTime() + 10_000_000_000L;
            while (System.nanoTime() < end) {
                if (cq.poll(wc) == 1) {
                    return wc[0];
                }
                Thread.onSpinWait();
            }
            throw new AssertionError("no completion within 10 s");
        }
    }
}
