// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.Reth;
import org.rdma4j.verbs.*;

/**
 * Multi-packet WRITEs on the in-process fabric travel as bursts (one hand-off for many packets): the
 * data, the completions and the packet counters are those of the packets; a burst the responder cannot
 * take in one step (out of sequence, duplicate, bad key) is taken as its packets.
 */
class BurstWriteTest {
    private static final int ALL = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;

    @Test
    void writesLongerThanTheWindowArriveWholeAndCountEveryPacket() {
        LoopbackFabric fabric = new LoopbackFabric();
        Device da = SoftDevices.createLoopback("burst-a", fabric, null);
        Device db = SoftDevices.createLoopback("burst-b", fabric, null);
        boolean ok = false;
        try (Arena arena = Arena.ofShared(); Context a = da.open(); Context b = db.open()) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue ca = a.createCq(16);
            CompletionQueue cb = b.createCq(16);
            QueuePair qa = pa.createQp(new QpInitAttr(QpType.RC, ca, ca).cap(new QpCap(8, 8, 2, 1, 0)));
            QueuePair qb = pb.createQp(new QpInitAttr(QpType.RC, cb, cb).cap(new QpCap(8, 8, 1, 1, 0)));
            ReceivePathFuzzTest.Connect.bringUp(qa, QpType.RC, b.queryGid(1, 1), qb.qpn()); // MTU 1024
            ReceivePathFuzzTest.Connect.bringUp(qb, QpType.RC, a.queryGid(1, 1), qa.qpn());
            int size = 200 * 1024 + 100; // 201 packets: more than the 128-PSN window
            MemorySegment src = arena.allocate(size, 8);
            MemorySegment dst = arena.allocate(size, 8);
            for (int i = 0; i < size; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
            }
            MemoryRegion ma = pa.regMr(src, ALL);
            MemoryRegion mb = pb.regMr(dst, ALL);
            long sentBefore = a.counters(1).get("sent_pkts");
            long rcvdBefore = b.counters(1).get("rcvd_pkts");
            // two SGEs, the second starting mid-packet
            qa.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(ma, 0, 5000)
                    .sge(ma, 5000, size - 5000).write(mb.address(), mb.rkey()));
            WorkCompletion wc = poll(ca, a, b);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(-1L, src.mismatch(dst), "the WRITE arrived whole");
            assertEquals(201L, a.counters(1).get("sent_pkts") - sentBefore, a.counters(1).toString());
            assertEquals(201L, b.counters(1).get("rcvd_pkts") - rcvdBefore, b.counters(1).toString());

            // WRITE with immediate: all but the last packet in a burst, the last alone, consuming a receive
            for (int i = 0; i < 10 * 1024; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 17 + 3));
            }
            qb.postRecv(new RecvWorkRequest().wrId(7));
            qa.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immData(0xCAFE)
                    .flags(SendFlag.SIGNALED).sge(ma, 0, 10 * 1024).rdma(mb.address() + 1, mb.rkey()));
            assertEquals(WcStatus.SUCCESS, poll(ca, a, b).status());
            WorkCompletion r = poll(cb, a, b);
            assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, r.opcode());
            assertEquals(0xCAFE, r.immData());
            assertEquals(10 * 1024, r.byteLen());
            assertEquals(-1L, src.asSlice(0, 10 * 1024).mismatch(dst.asSlice(1, 10 * 1024)));
            assertEquals(0L, a.counters(1).get("retransmits"));
            assertEquals(0L, b.counters(1).get("out_of_seq_request") + b.counters(1).get("duplicate_request"));
            qa.close();
            qb.close();
            ma.close();
            mb.close();
            ca.close();
            cb.close();
            pa.close();
            pb.close();
            ok = true;
        } finally {
            if (ok) {
                SoftDevices.remove(db);
                SoftDevices.remove(da);
            }
        }
    }

    private static WorkCompletion poll(CompletionQueue cq, Context a, Context b) {
        try {
            return ReceivePathFuzzTest.Connect.poll(cq);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; sender " + a.counters(1) + "; receiver " + b.counters(1), e);
        }
    }

    @Test
    void unsignaledWritesOnTheFabricAreAcknowledgedTogetherOrAfterADelay() {
        long delayedAckNs = 100_000; // Acknowledger.DELAYED_ACK_NS
        FakeClock clock = new FakeClock();
        LoopbackFabric fabric = new LoopbackFabric();
        Device da = SoftDevices.createOnClock("lazy-ack-a", fabric, clock);
        Device db = SoftDevices.createOnClock("lazy-ack-b", fabric, clock);
        clock.drive(((SoftDevice) db).hca.progressAgent()); // A's timers never run: nothing may time out
        boolean ok = false;
        try (Arena arena = Arena.ofShared(); Context a = da.open(); Context b = db.open()) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue ca = a.createCq(16);
            CompletionQueue cb = b.createCq(16);
            QueuePair qa = pa.createQp(new QpInitAttr(QpType.RC, ca, ca).cap(new QpCap(16, 1, 1, 1, 0)));
            QueuePair qb = pb.createQp(new QpInitAttr(QpType.RC, cb, cb).cap(new QpCap(16, 1, 1, 1, 0)));
            ReceivePathFuzzTest.Connect.bringUp(qa, QpType.RC, b.queryGid(1, 1), qb.qpn()); // timeout 14
            ReceivePathFuzzTest.Connect.bringUp(qb, QpType.RC, a.queryGid(1, 1), qa.qpn());
            MemorySegment src = arena.allocate(64, 8);
            MemorySegment dst = arena.allocate(64, 8);
            MemoryRegion ma = pa.regMr(src, ALL);
            MemoryRegion mb = pb.regMr(dst, ALL);
            long acks = b.counters(1).get("sent_pkts");
            for (int i = 1; i <= 3; i++) {
                src.set(ValueLayout.JAVA_LONG, 8 * i, i);
                qa.postSend(new SendWorkRequest().wrId(i).sge(ma, 8 * i, 8).write(mb.address() + 8 * i, mb.rkey()));
                assertEquals(i, dst.get(ValueLayout.JAVA_LONG, 8 * i), "WRITE " + i + " executed");
            }
            assertEquals(acks, b.counters(1).get("sent_pkts"), "unsignaled WRITEs asked for no ACK");
            clock.advance(delayedAckNs - 2_000, 1_000);
            assertEquals(acks, b.counters(1).get("sent_pkts"), "not before the delay");
            clock.advance(4_000, 1_000);
            assertEquals(acks + 1, b.counters(1).get("sent_pkts"), "one ACK for the three, after the delay");
            clock.advance(10 * delayedAckNs, 10_000);
            assertEquals(acks + 1, b.counters(1).get("sent_pkts"), "and no more");

            // a signaled WRITE asks at once; its ACK also covers an unsignaled one before it
            qa.postSend(new SendWorkRequest().wrId(4).sge(ma, 0, 8).write(mb.address(), mb.rkey()));
            qa.postSend(new SendWorkRequest().wrId(5).flags(SendFlag.SIGNALED).sge(ma, 0, 8)
                    .write(mb.address(), mb.rkey()));
            WorkCompletion[] wc = WorkCompletion.array(2);
            assertEquals(1, ca.poll(wc), "completed at once");
            assertEquals(5L, wc[0].wrId());
            assertEquals(acks + 2, b.counters(1).get("sent_pkts"));
            clock.advance(10 * delayedAckNs, 10_000);
            assertEquals(acks + 2, b.counters(1).get("sent_pkts"), "nothing owed any more");
            assertEquals(0L, a.counters(1).get("retransmits"));
            for (AutoCloseable c : new AutoCloseable[] {qa, qb, ma, mb, ca, cb, pa, pb}) {
                c.close();
            }
            ok = true;
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            if (ok) {
                SoftDevices.remove(db);
                SoftDevices.remove(da);
            }
        }
    }

    /** Responses the scripted QP sent: opcode, PSN and AETH syndrome per packet. */
    private static final class Responses implements Link {
        final List<int[]> sent = new ArrayList<>();

        @Override
        public synchronized void send(Packet p) {
            int op = Bth.opcodeOf(p.buffer);
            int syndrome = Opcode.hasAeth(op)
                    ? p.buffer.get(ValueLayout.JAVA_BYTE, Opcode.offsetOf(op, Opcode.HEADER_AETH)) & 0xFF : -1;
            sent.add(new int[] {op, Bth.psnOf(p.buffer), syndrome});
            p.release();
        }

        synchronized List<int[]> take() {
            List<int[]> l = new ArrayList<>(sent);
            sent.clear();
            return l;
        }
    }

    @Test
    void aBurstTheResponderCannotTakeInOneStepIsTakenAsItsPackets() {
        Responses link = new Responses();
        ScriptedPeer peer = new ScriptedPeer(SoftDevices.createLoopback("burst-rx", new LoopbackFabric(), null),
                "::ffff:10.9.9.7", 0x33, new ScriptedPeer.Options().link(link));
        try (Arena arena = Arena.ofShared()) {
            MemorySegment target = arena.allocate(8192, 8);
            MemoryRegion mr = peer.pd.regMr(target, ALL);
            MemorySegment source = arena.allocate(4 * 1024, 8);
            for (int i = 0; i < source.byteSize(); i++) {
                source.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 5 + 1));
            }
            // ahead of the expected PSN 0: one sequence NAK, every packet counted out of sequence
            peer.hca.receive(burst(peer, source, 2, mr.address(), mr.rkey()));
            List<int[]> r = link.take();
            assertEquals(1, r.size());
            assertEquals(Aeth.NAK_PSN_SEQ_ERR, r.get(0)[2] & 0xFF, "sequence NAK");
            assertEquals(0, r.get(0)[1]);
            assertEquals(4L, peer.ctx.counters(1).get("out_of_seq_request"));
            assertEquals(0L, target.get(ValueLayout.JAVA_LONG, 0), "nothing written");

            // in order: written whole, one ACK for the burst's last PSN
            peer.hca.receive(burst(peer, source, 0, mr.address(), mr.rkey()));
            r = link.take();
            assertEquals(1, r.size());
            assertEquals(Opcode.RC_ACKNOWLEDGE, r.get(0)[0]);
            assertEquals(3, r.get(0)[1]);
            assertEquals(-1L, source.mismatch(target.asSlice(0, source.byteSize())));

            // again: duplicates, answered by one ACK of the last PSN received, nothing executed twice
            peer.hca.receive(burst(peer, source, 0, mr.address(), mr.rkey()));
            r = link.take();
            assertEquals(1, r.size());
            assertEquals(3, r.get(0)[1]);
            assertEquals(4L, peer.ctx.counters(1).get("duplicate_request"));

            // a bad rkey: the first packet is NAKed (remote access error) and the QP goes to ERR
            peer.hca.receive(burst(peer, source, 4, mr.address(), mr.rkey() ^ 0x100));
            r = link.take();
            assertEquals(1, r.size());
            assertEquals(Aeth.NAK_REMOTE_ACCESS, r.get(0)[2] & 0xFF);
            assertEquals(QpState.ERR, peer.qp.state());
            mr.close();
        } finally {
            peer.close();
        }
    }

    /** A 4-packet WRITE burst (MTU 1024) of {@code source} to {@code va} from PSN {@code psn}, AckReq on. */
    private static Packet burst(ScriptedPeer peer, MemorySegment source, int psn, long va, int rkey) {
        Packet p = peer.request(Opcode.RC_RDMA_WRITE_FIRST, true, psn);
        Reth.writeAt(p.buffer, Opcode.offsetOf(Opcode.RC_RDMA_WRITE_FIRST, Opcode.HEADER_RETH), va, rkey,
                (int) source.byteSize());
        p.addPiece(source, 0, (int) source.byteSize());
        p.burstPackets = 4;
        p.burstMtu = 1024;
        p.burstLastOpcode = Opcode.RC_RDMA_WRITE_LAST;
        return p;
    }
}
