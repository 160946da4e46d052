package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.verbs.*;

/**
 * One-packet WRITEs on the in-process fabric go to the peer's responder without a packet
 * (Requester.writeDirect, Responder.takeWrite); anything unusual goes as the packet. What the program
 * sees must be what the packets give: data, PSNs, counters, completions in order, and an error in the
 * middle of a post list completing the WRs before it and failing the right one.
 */
class DirectWriteTest {
    private static final int ALL = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;

    private interface Body {
        void run(Context a, Context b, QueuePair qa, QueuePair qb, CompletionQueue ca, MemoryRegion ma,
                 MemoryRegion mb, MemorySegment src, MemorySegment dst) throws Exception;
    }

    private static void withPair(String name, Body body) {
        LoopbackFabric fabric = new LoopbackFabric();
        Device da = SoftDevices.createLoopback(name + "-a", fabric, null);
        Device db = SoftDevices.createLoopback(name + "-b", fabric, null);
        boolean ok = false;
        try (Arena arena = Arena.ofShared(); Context a = da.open(); Context b = db.open()) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue ca = a.createCq(64);
            CompletionQueue cb = b.createCq(64);
            QueuePair qa = pa.createQp(new QpInitAttr(QpType.RC, ca, ca).cap(new QpCap(32, 4, 2, 1, 64)));
            QueuePair qb = pb.createQp(new QpInitAttr(QpType.RC, cb, cb).cap(new QpCap(32, 4, 1, 1, 0)));
            ReceivePathFuzzTest.Connect.bringUp(qa, QpType.RC, b.queryGid(1, 1), qb.qpn()); // MTU 1024
            ReceivePathFuzzTest.Connect.bringUp(qb, QpType.RC, a.queryGid(1, 1), qa.qpn());
            MemorySegment src = arena.allocate(4096, 8);
            MemorySegment dst = arena.allocate(4096, 8);
            MemoryRegion ma = pa.regMr(src, ALL);
            MemoryRegion mb = pb.regMr(dst, ALL);
            body.run(a, b, qa, qb, ca, ma, mb, src, dst);
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

    @Test
    void smallWritesArriveInOrderWithTheirPsnsAndCounters() {
        withPair("direct-ok", (a, b, qa, qb, ca, ma, mb, src, dst) -> {
            long sent = a.counters(1).get("sent_pkts");
            long rcvd = b.counters(1).get("rcvd_pkts");
            int n = 100;
            WorkCompletion[] wc = WorkCompletion.array(4);
            for (int i = 0; i < n; i++) {
                src.set(ValueLayout.JAVA_LONG, 8 * (i % 64), 1000 + i);
                boolean signaled = i % 10 == 9;
                SendWorkRequest w = new SendWorkRequest().wrId(i).flags(signaled ? SendFlag.SIGNALED : 0)
                        .sge(ma, 8 * (i % 64), 8).write(mb.address() + 8 * (i % 64), mb.rkey());
                if (i % 2 == 0) {
                    w.flags(w.sendFlags() | SendFlag.INLINE); // inline and gathered alike
                }
                qa.postSend(w);
                // at once unless the peer's task was busy on its progress thread (an owed ACK's timer)
                long end = System.nanoTime() + 10_000_000_000L;
                while (dst.get(ValueLayout.JAVA_LONG, 8 * (i % 64)) != 1000 + i && System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
                assertEquals(1000 + i, dst.get(ValueLayout.JAVA_LONG, 8 * (i % 64)), "WRITE " + i + " executed");
                if (signaled) {
                    WorkCompletion c = ReceivePathFuzzTest.Connect.poll(ca);
                    assertEquals(WcStatus.SUCCESS, c.status(), c.toString());
                    assertEquals(i, c.wrId(), "completions in order, one per signaled WR");
                    assertEquals(WcOpcode.RDMA_WRITE, c.opcode());
                    assertEquals(8, c.byteLen());
                }
            }
            assertEquals(0, ca.poll(wc), "nothing more");
            assertEquals(n, a.counters(1).get("sent_pkts") - sent, "one packet counted per WRITE");
            assertEquals(n, b.counters(1).get("rcvd_pkts") - rcvd, a.counters(1) + " / " + b.counters(1));
            assertEquals(n, qa.query().sqPsn, "the requester's next PSN");
            assertEquals(n, qb.query().rqPsn, "the responder's expected PSN");
            assertEquals(0L, a.counters(1).get("retransmits"));
            assertEquals(0L, b.counters(1).get("out_of_seq_request") + b.counters(1).get("duplicate_request"));
            assertEquals(QpState.RTS, qb.state());
        });
    }

    @Test
    void aBadRkeyInThePostListCompletesTheEarlierWritesAndFailsItsOwn() {
        withPair("direct-bad", (a, b, qa, qb, ca, ma, mb, src, dst) -> {
            for (int i = 0; i < 5; i++) {
                src.set(ValueLayout.JAVA_LONG, 8 * i, 77 + i);
            }
            SendWorkRequest[] w = new SendWorkRequest[5];
            for (int i = 0; i < 5; i++) {
                w[i] = new SendWorkRequest().wrId(i).flags(i == 0 ? 0 : SendFlag.SIGNALED).sge(ma, 8 * i, 8)
                        .write(mb.address() + 8 * i, i == 2 ? mb.rkey() ^ 0x100 : mb.rkey());
            }
            for (int i = 0; i < 4; i++) {
                w[i].next(w[i + 1]);
            }
            qa.postSend(w[0]);
            WcStatus[] expect = {WcStatus.SUCCESS, WcStatus.REM_ACCESS_ERR, WcStatus.WR_FLUSH_ERR,
                    WcStatus.WR_FLUSH_ERR};
            for (int i = 1; i <= 4; i++) {
                WorkCompletion c = ReceivePathFuzzTest.Connect.poll(ca);
                assertEquals(i, c.wrId(), c.toString());
                assertEquals(expect[i - 1], c.status(), c.toString());
            }
            assertEquals(77L, dst.get(ValueLayout.JAVA_LONG, 0), "the WRITE before it executed");
            assertEquals(78L, dst.get(ValueLayout.JAVA_LONG, 8), "the WRITE before it executed");
            assertEquals(0L, dst.get(ValueLayout.JAVA_LONG, 16), "the bad one did not");
            assertEquals(0L, dst.get(ValueLayout.JAVA_LONG, 24), "nor any after it");
            assertEquals(0L, dst.get(ValueLayout.JAVA_LONG, 32), "nor any after it");
            assertEquals(QpState.ERR, qb.state(), "the responder NAKed and went to ERR");
            assertEquals(QpState.ERR, qa.state());
        });
    }

    @Test
    void aWriteTheResponderRefusesWithoutAPacketIsNakedAsThePacketWouldBe() {
        withPair("direct-refused", (a, b, qa, qb, ca, ma, mb, src, dst) -> {
            // out of the region's range by one byte: the packet's REMOTE_ACCESS NAK
            qa.postSend(new SendWorkRequest().wrId(9).flags(SendFlag.SIGNALED | SendFlag.INLINE).sge(ma, 0, 8)
                    .write(mb.address() + 4096 - 7, mb.rkey()));
            WorkCompletion c = ReceivePathFuzzTest.Connect.poll(ca);
            assertEquals(9L, c.wrId());
            assertEquals(WcStatus.REM_ACCESS_ERR, c.status(), c.toString());
            assertEquals(0L, dst.get(ValueLayout.JAVA_LONG, 4096 - 8), "nothing written");
            assertEquals(QpState.ERR, qb.state());
        });
    }
}
