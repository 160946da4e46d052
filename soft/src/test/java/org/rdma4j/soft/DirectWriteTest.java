// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.engine.QpEngine;
import org.rdma4j.verbs.*;

/**
 * One-packet WRITEs on the in-process fabric go to the peer's responder without a packet
 * (Requester.sendDirect, Path.handOver, Responder.receive(PacketInfo)); anything unusual goes as the packet. What the program
 * sees must be what the packets give: data, PSNs, counters, completions in order, and an error in the
 * middle of a post list completing the WRs before it and failing the right one.
 */
class DirectWriteTest {
    private interface Body {
        void run(Context a, Context b, QueuePair qa, QueuePair qb, CompletionQueue ca, MemoryRegion ma,
                 MemoryRegion mb, MemorySegment src, MemorySegment dst) throws Exception;
    }

    private static void withPair(String name, Body body) {
        withPair(name, 32, body);
    }

    private static void withPair(String name, int sqDepth, Body body) {
        InProcessPair.with(name, new QpCap(sqDepth, 4, 2, 1, 64), new QpCap(32, 4, 1, 1, 0),
                p -> body.run(p.a(), p.b(), p.qa(), p.qb(), p.ca(), p.ma(), p.mb(), p.src(), p.dst()));
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
    void aLongPostListTakesItsAcksWithoutPackets() {
        // Past a quarter of the send queue waiting for retirement every WRITE asks for an ACK, and a pass
        // of the requester sends the whole list before it takes any ACK in: the ACKs that arrive during
        // the pass must be coalesced into the one waiting, not queued as packets.
        withPair("direct-list", 128, (a, b, qa, qb, ca, ma, mb, src, dst) -> {
            QpEngine requester = ((SoftQp) qa).engine;
            long queuedBefore = requester.inboundQueued();
            int rounds = 4;
            int list = 64;
            for (int r = 0; r < rounds; r++) {
                SendWorkRequest first = null;
                SendWorkRequest prev = null;
                for (int i = 0; i < list; i++) {
                    int slot = i % 64;
                    src.set(ValueLayout.JAVA_LONG, 8 * slot, r * 1000L + i);
                    SendWorkRequest w = new SendWorkRequest().wrId(r * list + i)
                            .flags(i == list - 1 ? SendFlag.SIGNALED : 0).sge(ma, 8 * slot, 8)
                            .write(mb.address() + 8 * slot, mb.rkey());
                    if (prev == null) {
                        first = w;
                    } else {
                        prev.next(w);
                    }
                    prev = w;
                }
                qa.postSend(first);
                WorkCompletion c = ReceivePathFuzzTest.Connect.poll(ca);
                assertEquals(WcStatus.SUCCESS, c.status(), c.toString());
                assertEquals(r * list + list - 1, c.wrId());
                assertEquals(r * 1000L + list - 1, dst.get(ValueLayout.JAVA_LONG, 8 * 63), "the last WRITE landed");
            }
            // the owed-ACK timer of the responder's progress thread may meet the requester's task busy
            // once in a while (then that ACK is a packet); a list whose ACKs all go as packets queues
            // dozens per round
            assertTrue(requester.inboundQueued() - queuedBefore <= rounds,
                    "ACK packets queued: " + (requester.inboundQueued() - queuedBefore));
            assertEquals(0L, a.counters(1).get("retransmits"));
            assertEquals(QpState.RTS, qa.state());
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

    @Test
    void theCountersKeepTheWritesOfADestroyedQp() {
        withPair("direct-destroyed", (a, b, qa, qb, ca, ma, mb, src, dst) -> {
            long sent = a.counters(1).get("sent_pkts");
            long rcvd = b.counters(1).get("rcvd_pkts");
            for (int i = 0; i < 20; i++) {
                qa.postSend(new SendWorkRequest().wrId(i).flags(i == 19 ? SendFlag.SIGNALED | SendFlag.INLINE
                        : SendFlag.INLINE).sge(ma, 0, 8).write(mb.address(), mb.rkey()));
            }
            assertEquals(WcStatus.SUCCESS, ReceivePathFuzzTest.Connect.poll(ca).status());
            long sentBefore = a.counters(1).get("sent_pkts") - sent;
            long rcvdBefore = b.counters(1).get("rcvd_pkts") - rcvd;
            assertEquals(20, sentBefore, "one packet per WRITE");
            assertEquals(20, rcvdBefore, "one packet per WRITE");
            qa.close();
            qb.close();
            // the per-QP counts moved into the device's: nothing lost, nothing counted twice
            assertEquals(sentBefore, a.counters(1).get("sent_pkts") - sent);
            assertEquals(rcvdBefore, b.counters(1).get("rcvd_pkts") - rcvd);
        });
    }

    @Test
    void morePostedWritesThanTheWindowAllComplete() {
        // 300 WRITEs in one post list: the requester stops at the 128-PSN window and goes on only when
        // an ACK arrives; a pass that only sent ends the task's work, the ACK must bring it back.
        withPair("direct-window", 512, (a, b, qa, qb, ca, ma, mb, src, dst) -> {
            int n = 300;
            SendWorkRequest[] w = new SendWorkRequest[n];
            for (int i = 0; i < n; i++) {
                src.set(ValueLayout.JAVA_LONG, 8 * (i % 256), 5000 + i);
                w[i] = new SendWorkRequest().wrId(i).flags(i == n - 1 ? SendFlag.SIGNALED : 0)
                        .sge(ma, 8 * (i % 256), 8).write(mb.address() + 8 * (i % 256), mb.rkey());
                if (i > 0) {
                    w[i - 1].next(w[i]);
                }
            }
            qa.postSend(w[0]);
            WorkCompletion c = ReceivePathFuzzTest.Connect.poll(ca);
            assertEquals(n - 1, c.wrId(), c.toString());
            assertEquals(WcStatus.SUCCESS, c.status(), c.toString());
            for (int i = n - 256; i < n; i++) {
                assertEquals(5000 + i, dst.get(ValueLayout.JAVA_LONG, 8 * (i % 256)), "WRITE " + i);
            }
            assertEquals(n, qa.query().sqPsn);
            assertEquals(QpState.RTS, qa.state());
        });
    }

    @Test
    void twoThreadsPostingToOneQpLoseNoWorkRequest() throws Exception {
        // the post lock: two posters at once, each with its own wr_ids and target slots; every WR
        // completes exactly once and every slot holds its last value
        withPair("direct-posters", 64, (a, b, qa, qb, ca, ma, mb, src, dst) -> {
            int rounds = 300;
            int perThread = 16; // 2 x 16 <= the send queue (64) and the CQ (64)
            for (int t = 0; t < 2; t++) {
                for (int k = 0; k < perThread; k++) {
                    src.set(ValueLayout.JAVA_LONG, 8 * (t * perThread + k), 100_000L * t + k);
                }
            }
            WorkCompletion[] wc = WorkCompletion.array(64);
            for (int r = 0; r < rounds; r++) {
                CountDownLatch go = new CountDownLatch(1);
                AtomicReference<Throwable> failed = new AtomicReference<>();
                Thread[] posters = new Thread[2];
                for (int t = 0; t < 2; t++) {
                    int id = t;
                    posters[t] = Thread.ofPlatform().start(() -> {
                        try {
                            go.await();
                            for (int k = 0; k < perThread; k++) {
                                int slot = id * perThread + k;
                                qa.postSend(new SendWorkRequest().wrId(slot)
                                        .flags(SendFlag.SIGNALED | (k % 2 == 0 ? SendFlag.INLINE : 0))
                                        .sge(ma, 8 * slot, 8).write(mb.address() + 8 * slot, mb.rkey()));
                            }
                        } catch (Throwable e) {
                            failed.set(e);
                        }
                    });
                }
                go.countDown();
                for (Thread t : posters) {
                    t.join(10_000);
                    assertFalse(t.isAlive(), "a poster hung");
                }
                assertNull(failed.get(), () -> "a post failed: " + failed.get());
                boolean[] seen = new boolean[2 * perThread];
                for (int got = 0; got < 2 * perThread; got++) {
                    WorkCompletion c = ReceivePathFuzzTest.Connect.poll(ca);
                    assertEquals(WcStatus.SUCCESS, c.status(), c.toString());
                    assertFalse(seen[(int) c.wrId()], "completed twice: " + c);
                    seen[(int) c.wrId()] = true;
                }
                assertEquals(0, ca.poll(wc), "no completion beyond the posted WRs");
            }
            for (int slot = 0; slot < 2 * perThread; slot++) {
                assertEquals(src.get(ValueLayout.JAVA_LONG, 8 * slot), dst.get(ValueLayout.JAVA_LONG, 8 * slot));
            }
            assertEquals(QpState.RTS, qa.state());
        });
    }
}
