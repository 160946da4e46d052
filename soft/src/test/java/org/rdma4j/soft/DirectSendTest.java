// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.*;

/**
 * One-packet SENDs on the in-process fabric go to the peer's responder without a packet
 * (Requester.sendDirect, Path.handOver, Responder.receive(PacketInfo)); anything unusual goes as the packet. What the program
 * sees must be what the packets give: data scattered into the receive WQE, the receive completion's
 * length, immediate and flags, PSNs, counters, an RNR wait for a receive not yet posted, and a receive
 * too short failing both sides.
 */
class DirectSendTest {
    private interface Body {
        void run(Context a, Context b, QueuePair qa, QueuePair qb, CompletionQueue ca, CompletionQueue cb,
                 MemoryRegion ma, MemoryRegion mb, MemorySegment src, MemorySegment dst) throws Exception;
    }

    private static void withPair(String name, Body body) {
        InProcessPair.with(name, new QpCap(32, 4, 2, 1, 64), new QpCap(4, 32, 1, 2, 0),
                p -> body.run(p.a(), p.b(), p.qa(), p.qb(), p.ca(), p.cb(), p.ma(), p.mb(), p.src(), p.dst()));
    }

    @Test
    void smallSendsArriveInOrderWithTheirLengthsImmediatesPsnsAndCounters() {
        withPair("dsend-ok", (a, b, qa, qb, ca, cb, ma, mb, src, dst) -> {
            long sent = a.counters(1).get("sent_pkts");
            long rcvd = b.counters(1).get("rcvd_pkts");
            long recvs = b.counters(1).get("rdma_recvs");
            long sends = a.counters(1).get("rdma_sends");
            int n = 60;
            for (int i = 0; i < n; i++) {
                int len = i % 3 == 2 ? 0 : 12 + i % 40; // a SEND without data now and then
                for (int k = 0; k < len; k++) {
                    src.set(ValueLayout.JAVA_BYTE, k, (byte) (i * 7 + k));
                }
                // the receive's two entries split the message: 8 bytes at 1024, the rest at 2048
                dst.fill((byte) 0);
                qb.postRecv(new RecvWorkRequest().wrId(10_000 + i).sge(mb, 1024, 8).sge(mb, 2048, 1024));
                SendWorkRequest w = new SendWorkRequest().wrId(i).flags(SendFlag.SIGNALED
                        | (i % 2 == 0 ? SendFlag.INLINE : 0) | (i % 5 == 0 ? SendFlag.SOLICITED : 0));
                if (len > 0) {
                    w.sge(ma, 0, len);
                }
                if (i % 4 == 1) {
                    w.sendWithImm(0x5EED0000 + i);
                } else {
                    w.send();
                }
                qa.postSend(w);
                WorkCompletion r = ReceivePathFuzzTest.Connect.poll(cb);
                assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
                assertEquals(10_000 + i, r.wrId(), "receives complete in order");
                assertEquals(WcOpcode.RECV, r.opcode());
                assertEquals(len, r.byteLen(), "the message's length");
                assertEquals(qb.qpn(), r.qpNum());
                if (i % 4 == 1) {
                    assertEquals(WcFlag.WITH_IMM, r.wcFlags() & WcFlag.WITH_IMM, r.toString());
                    assertEquals(0x5EED0000 + i, r.immData());
                } else {
                    assertEquals(0, r.wcFlags() & WcFlag.WITH_IMM, r.toString());
                }
                for (int k = 0; k < len; k++) {
                    long at = k < 8 ? 1024 + k : 2048 + k - 8;
                    assertEquals((byte) (i * 7 + k), dst.get(ValueLayout.JAVA_BYTE, at), "SEND " + i + " byte " + k);
                }
                WorkCompletion s = ReceivePathFuzzTest.Connect.poll(ca);
                assertEquals(WcStatus.SUCCESS, s.status(), s.toString());
                assertEquals(i, s.wrId());
                assertEquals(WcOpcode.SEND, s.opcode());
            }
            assertEquals(n, a.counters(1).get("sent_pkts") - sent, "one packet counted per SEND");
            assertEquals(n, b.counters(1).get("rcvd_pkts") - rcvd);
            assertEquals(n, b.counters(1).get("rdma_recvs") - recvs);
            assertEquals(n, a.counters(1).get("rdma_sends") - sends);
            assertEquals(n, qa.query().sqPsn, "the requester's next PSN");
            assertEquals(n, qb.query().rqPsn, "the responder's expected PSN");
            assertEquals(0L, a.counters(1).get("retransmits"));
            assertEquals(QpState.RTS, qb.state());
        });
    }

    @Test
    void aSendBeforeItsReceiveWaitsOutTheRnrNakAndThenArrives() {
        withPair("dsend-rnr", (a, b, qa, qb, ca, cb, ma, mb, src, dst) -> {
            long rnr = b.counters(1).get("send_rnr_err");
            src.set(ValueLayout.JAVA_LONG, 0, 0x1122334455667788L);
            qa.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(ma, 0, 8).send());
            WorkCompletion[] wc = WorkCompletion.array(1);
            Thread.sleep(20);
            assertEquals(0, ca.poll(wc), "no completion while the peer has no receive");
            assertTrue(b.counters(1).get("send_rnr_err") > rnr, "the responder sent an RNR NAK: " + b.counters(1));
            qb.postRecv(new RecvWorkRequest().wrId(2).sge(mb, 0, 64));
            WorkCompletion r = ReceivePathFuzzTest.Connect.poll(cb);
            assertEquals(WcStatus.SUCCESS, r.status(), r.toString());
            assertEquals(2L, r.wrId());
            assertEquals(8, r.byteLen());
            assertEquals(0x1122334455667788L, dst.get(ValueLayout.JAVA_LONG, 0));
            WorkCompletion s = ReceivePathFuzzTest.Connect.poll(ca);
            assertEquals(WcStatus.SUCCESS, s.status(), s.toString());
            assertEquals(QpState.RTS, qa.state());
        });
    }

    @Test
    void aReceiveTooShortFailsBothSidesAsThePacketWould() {
        withPair("dsend-short", (a, b, qa, qb, ca, cb, ma, mb, src, dst) -> {
            qb.postRecv(new RecvWorkRequest().wrId(3).sge(mb, 0, 4));
            qa.postSend(new SendWorkRequest().wrId(4).flags(SendFlag.SIGNALED | SendFlag.INLINE).sge(ma, 0, 8).send());
            WorkCompletion r = ReceivePathFuzzTest.Connect.poll(cb);
            assertEquals(3L, r.wrId());
            assertEquals(WcStatus.LOC_LEN_ERR, r.status(), r.toString());
            WorkCompletion s = ReceivePathFuzzTest.Connect.poll(ca);
            assertEquals(4L, s.wrId());
            assertEquals(WcStatus.REM_INV_REQ_ERR, s.status(), s.toString());
            assertEquals(QpState.ERR, qb.state());
            assertEquals(QpState.ERR, qa.state());
        });
    }

    @Test
    void aReceiveWithABadLkeyFailsBothSidesAsThePacketWould() {
        withPair("dsend-lkey", (a, b, qa, qb, ca, cb, ma, mb, src, dst) -> {
            qb.postRecv(new RecvWorkRequest().wrId(5).sge(mb.address(), 64, mb.lkey() ^ 0x100));
            qa.postSend(new SendWorkRequest().wrId(6).flags(SendFlag.SIGNALED).sge(ma, 0, 8).send());
            WorkCompletion r = ReceivePathFuzzTest.Connect.poll(cb);
            assertEquals(5L, r.wrId());
            assertEquals(WcStatus.LOC_QP_OP_ERR, r.status(), r.toString());
            WorkCompletion s = ReceivePathFuzzTest.Connect.poll(ca);
            assertEquals(6L, s.wrId());
            assertEquals(WcStatus.REM_OP_ERR, s.status(), s.toString());
            assertEquals(QpState.ERR, qb.state());
        });
    }
}
