// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/** SEMANTICS.md, Data path: SEND/RECV on RC, with immediate, multi-packet, several SGEs, inline. */
@Rule({"S-DATA-1", "S-DATA-2"})
public class SendRecvConformanceTest extends AbstractDataPathTest {

    @ParameterizedTest(name = "MTU {0}, {1} bytes")
    @MethodSource("mtusAndSizes")
    void sendDeliversExactlyTheBytes(Mtu mtu, int size) {
        assumeMtu(mtu);
        sendAndCheck(connect(spec(QpType.RC).mtu(mtu)), size, false, size);
    }

    @ParameterizedTest(name = "MTU {0}, {1} bytes")
    @MethodSource("mtusAndSomeSizes")
    void sendWithImmediateDeliversImmediateAndBytes(Mtu mtu, int size) {
        assumeMtu(mtu);
        sendAndCheck(connect(spec(QpType.RC).mtu(mtu)), size, true, size + 1);
    }

    /**
     * query_qp reports the live PSNs (rxe_qp_to_attr): sq_psn is the PSN of the requester's next packet,
     * rq_psn the PSN the responder expects next, not the values the last modify wrote. A SEND (1 packet),
     * a WRITE (3) and a READ (2) from A move A's sq_psn and B's rq_psn by 6, across the 24-bit wrap.
     */
    @Test
    void queryReportsTheLivePsnsAfterTraffic() {
        QpPair p = connect(spec(QpType.RC).mtu(Mtu.MTU_1024).psns(0xFFFFFE, 0x2000));
        MemoryRegion src = register(p.a(), 4 * 1024, MR_ALL);
        MemoryRegion dst = register(p.b(), 4 * 1024, MR_ALL);
        postRecv(p.b(), 1, dst, 0, 64);
        p.a().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, 64));
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        expect(p.b().recvCq(), 1, WcOpcode.RECV);
        p.a().qp().postSend(wr(3, WrOpcode.RDMA_WRITE).sge(src, 0, 3 * 1024).rdma(addr(dst, 0), dst.rkey()));
        expect(p.a().sendCq(), 3, WcOpcode.RDMA_WRITE);
        p.a().qp().postSend(wr(4, WrOpcode.RDMA_READ).sge(src, 0, 2 * 1024).rdma(addr(dst, 0), dst.rkey()));
        expect(p.a().sendCq(), 4, WcOpcode.RDMA_READ);
        assertEquals(0x000004, p.a().qp().query().sqPsn, "A's next request PSN");
        assertEquals(0x000004, p.b().qp().query().rqPsn, "B expects the PSN after the READ");
        assertEquals(0x2000, p.a().qp().query().rqPsn, "B sent no requests");
        assertEquals(0x2000, p.b().qp().query().sqPsn, "responses do not use B's send PSNs");
    }

    @Test
    void zeroLengthSendWithAZeroLengthSgeWorks() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), 64, MR_ALL);
        MemoryRegion dst = register(p.b(), 64, MR_ALL);
        postRecv(p.b(), 1, dst, 0, 64);
        p.a().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, 0));
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        assertEquals(0, expect(p.b().recvCq(), 1, WcOpcode.RECV).byteLen());
        assertGuardAround(dst, 0, 0, "receive buffer of an empty message");
    }

    @Test
    void zeroLengthSendIntoAReceiveWithoutSgesWorks() {
        QpPair p = connect(spec(QpType.RC));
        p.b().qp().postRecv(new RecvWorkRequest().wrId(1));
        p.a().qp().postSend(wr(2, WrOpcode.SEND));
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        assertEquals(0, expect(p.b().recvCq(), 1, WcOpcode.RECV).byteLen());
    }

    @ParameterizedTest(name = "MTU {0}, {1} SGEs")
    @MethodSource("mtusAndSgeCounts")
    void sendGathersSeveralSges(Mtu mtu, int n) {
        assumeMtu(mtu);
        assumeSges(n);
        QpPair p = connect(spec(QpType.RC).mtu(mtu).cap(new QpCap(16, 16, n, n, 0)));
        int total = 3 * mtu.bytes() + 17;
        int[] parts = split(total, n);
        MemoryRegion src = register(p.a(), total + 64L * n + 64, MR_ALL);
        MemoryRegion dst = register(p.b(), total + 256L, MR_ALL);
        SendWorkRequest w = wr(1, WrOpcode.SEND);
        long off = 13; // pieces are scattered over the source with gaps between them
        long from = 0;
        for (int len : parts) {
            fillPattern(src.segment(), off, len, 5, from);
            w.sge(src, off, len);
            off += len + 64;
            from += len;
        }
        postRecv(p.b(), 2, dst, 64, total);
        p.a().qp().postSend(w);
        expect(p.a().sendCq(), 1, WcOpcode.SEND);
        assertEquals(total, expect(p.b().recvCq(), 2, WcOpcode.RECV).byteLen());
        assertPattern(dst.segment(), 64, total, 5, "gathered message");
        assertGuardAround(dst, 64, total, "receive buffer");
    }

    @ParameterizedTest(name = "MTU {0}, {1} SGEs")
    @MethodSource("mtusAndSgeCounts")
    void receiveScattersIntoSeveralSges(Mtu mtu, int n) {
        assumeMtu(mtu);
        assumeSges(n);
        QpPair p = connect(spec(QpType.RC).mtu(mtu).cap(new QpCap(16, 16, n, n, 0)));
        int total = 3 * mtu.bytes() + 17;
        int[] parts = split(total, n);
        MemoryRegion src = register(p.a(), total, MR_ALL);
        MemoryRegion dst = register(p.b(), total + 128L * n + 64, MR_ALL);
        fillPattern(src.segment(), 0, total, 6);
        RecvWorkRequest r = new RecvWorkRequest().wrId(2);
        long[] offs = new long[n];
        long off = 64;
        for (int i = 0; i < n; i++) {
            offs[i] = off;
            r.sge(dst, off, parts[i]);
            off += parts[i] + 128;
        }
        p.b().qp().postRecv(r);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, total));
        expect(p.a().sendCq(), 1, WcOpcode.SEND);
        assertEquals(total, expect(p.b().recvCq(), 2, WcOpcode.RECV).byteLen());
        long from = 0;
        long guardFrom = 0;
        for (int i = 0; i < n; i++) {
            assertGuard(dst.segment(), guardFrom, offs[i], "before scatter entry " + i);
            assertPattern(dst.segment(), offs[i], parts[i], 6, from, "scatter entry " + i);
            from += parts[i];
            guardFrom = offs[i] + parts[i];
        }
        assertGuard(dst.segment(), guardFrom, dst.length(), "after the last scatter entry");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 16, -1})
    void inlineSendCopiesTheDataAtPostTime(int sizeOrMax) {
        int want = Math.min(256, deviceAttr().maxInlineData());
        assumeTrue(want > 0, "device has no inline data");
        QpPair p = connect(spec(QpType.RC).capA(new QpCap(16, 16, 1, 1, want)));
        int size = sizeOrMax < 0 ? p.a().qp().cap().maxInlineData : sizeOrMax;
        MemoryRegion src = register(p.a(), size + 64L, MR_ALL);
        MemoryRegion dst = register(p.b(), size + 128L, MR_ALL);
        fillPattern(src.segment(), 0, size, 11);
        postRecv(p.b(), 1, dst, 64, size + 64);
        SendWorkRequest w = wr(2, WrOpcode.SEND).flags(SendFlag.SIGNALED | SendFlag.INLINE);
        if (size > 0) {
            w.sge(src, 0, size);
        }
        p.a().qp().postSend(w);
        fillPattern(src.segment(), 0, size, 12); // inline: the posted copy is what travels
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        assertEquals(size, expect(p.b().recvCq(), 1, WcOpcode.RECV).byteLen());
        assertPattern(dst.segment(), 64, size, 11, "inline data as it was at post time");
        assertGuardAround(dst, 64, size, "receive buffer");
    }

    @Test
    void inlineSendNeedsNoRegisteredMemory() {
        int want = Math.min(64, deviceAttr().maxInlineData());
        assumeTrue(want >= 32, "device has too little inline data");
        QpPair p = connect(spec(QpType.RC).capA(new QpCap(16, 16, 1, 1, want)));
        MemorySegment unregistered = allocate(64);
        fillPattern(unregistered, 0, 32, 13);
        MemoryRegion dst = register(p.b(), 128, MR_ALL);
        postRecv(p.b(), 1, dst, 0, 64);
        // Java's form of an inline SGE pointing at unregistered memory: the segment itself.
        p.a().qp().postSend(wr(2, WrOpcode.SEND).flags(SendFlag.SIGNALED).inlineData(unregistered.asSlice(0, 32)));
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        assertEquals(32, expect(p.b().recvCq(), 1, WcOpcode.RECV).byteLen());
        assertPattern(dst.segment(), 0, 32, 13, "inline data from unregistered memory");
    }

    @Test
    void inlineSendIgnoresTheLkey() {
        int want = Math.min(64, deviceAttr().maxInlineData());
        assumeTrue(want >= 32, "device has too little inline data");
        QpPair p = connect(spec(QpType.RC).capA(new QpCap(16, 16, 1, 1, want)));
        MemoryRegion src = register(p.a(), 64, MR_ALL);
        fillPattern(src.segment(), 0, 32, 17);
        MemoryRegion dst = register(p.b(), 128, MR_ALL);
        postRecv(p.b(), 1, dst, 0, 64);
        p.a().qp().postSend(wr(2, WrOpcode.SEND).flags(SendFlag.SIGNALED | SendFlag.INLINE)
                .sge(src.address(), 32, src.lkey() ^ 0x5A5A00));
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        assertEquals(32, expect(p.b().recvCq(), 1, WcOpcode.RECV).byteLen());
        assertPattern(dst.segment(), 0, 32, 17, "inline data sent with a wrong lkey");
    }

    @Test
    void receivesCompleteInPostingOrder() {
        QpPair p = connect(spec(QpType.RC).mtu(Mtu.MTU_1024));
        int n = 8;
        MemoryRegion src = register(p.a(), n * 4096L, MR_ALL);
        MemoryRegion dst = register(p.b(), n * 4096L, MR_ALL);
        for (int i = 0; i < n; i++) {
            postRecv(p.b(), 100 + i, dst, i * 4096L, 4096);
        }
        for (int i = 0; i < n; i++) {
            int len = 100 + i * 450; // 1 to 4 packets
            fillPattern(src.segment(), i * 4096L, len, 20 + i);
            p.a().qp().postSend(wr(i, WrOpcode.SEND).sge(src, i * 4096L, len));
        }
        for (int i = 0; i < n; i++) {
            expect(p.a().sendCq(), i, WcOpcode.SEND);
        }
        for (int i = 0; i < n; i++) {
            int len = 100 + i * 450;
            assertEquals(len, expect(p.b().recvCq(), 100 + i, WcOpcode.RECV).byteLen());
            assertPattern(dst.segment(), i * 4096L, len, 20 + i, "message " + i);
        }
    }

    @ParameterizedTest
    @EnumSource(value = Mtu.class, names = {"MTU_256", "MTU_1024"})
    void multiPacketMessagesCrossThePsnWrap(Mtu mtu) {
        assumeMtu(mtu);
        QpPair p = connect(spec(QpType.RC).mtu(mtu).psns(0xFFFFF9, 0xFFFFFE));
        for (int i = 0; i < 3; i++) {
            sendAndCheck(p, 5 * mtu.bytes() + 3, i == 1, 30 + i);
        }
        // and the other way round
        MemoryRegion src = register(p.b(), KIB_64, MR_ALL);
        MemoryRegion dst = register(p.a(), KIB_64, MR_ALL);
        fillPattern(src.segment(), 0, KIB_64, 33);
        postRecv(p.a(), 1, dst, 0, KIB_64);
        p.b().qp().postSend(wr(2, WrOpcode.SEND).sge(src, 0, KIB_64));
        expect(p.b().sendCq(), 2, WcOpcode.SEND);
        assertEquals(KIB_64, expect(p.a().recvCq(), 1, WcOpcode.RECV).byteLen());
        assertPattern(dst.segment(), 0, KIB_64, 33, "B to A across the wrap");
    }

    @Test
    void bothDirectionsAtOnce() {
        QpPair p = connect(spec(QpType.RC).mtu(Mtu.MTU_1024));
        int len = 10_000;
        MemoryRegion a = register(p.a(), 2L * len, MR_ALL);
        MemoryRegion b = register(p.b(), 2L * len, MR_ALL);
        fillPattern(a.segment(), 0, len, 40);
        fillPattern(b.segment(), 0, len, 41);
        postRecv(p.a(), 10, a, len, len);
        postRecv(p.b(), 20, b, len, len);
        p.a().qp().postSend(wr(11, WrOpcode.SEND).sge(a, 0, len));
        p.b().qp().postSend(wr(21, WrOpcode.SEND).sge(b, 0, len));
        expect(p.a().sendCq(), 11, WcOpcode.SEND);
        expect(p.b().sendCq(), 21, WcOpcode.SEND);
        expect(p.a().recvCq(), 10, WcOpcode.RECV);
        expect(p.b().recvCq(), 20, WcOpcode.RECV);
        assertPattern(a.segment(), len, len, 41, "B to A");
        assertPattern(b.segment(), len, len, 40, "A to B");
    }

    @Test
    void aFullSendQueueOfMessagesArrivesInOrder() {
        QpPair p = connect(spec(QpType.RC).mtu(Mtu.MTU_256).cap(new QpCap(64, 64, 1, 1, 0)).cqe(128));
        int n = p.a().qp().cap().maxSendWr;
        n = Math.min(n, p.b().qp().cap().maxRecvWr);
        int len = 700;
        MemoryRegion src = register(p.a(), (long) n * len, MR_ALL);
        MemoryRegion dst = register(p.b(), (long) n * len, MR_ALL);
        fillPattern(src.segment(), 0, (long) n * len, 50);
        for (int i = 0; i < n; i++) {
            postRecv(p.b(), 1000 + i, dst, (long) i * len, len);
        }
        for (int i = 0; i < n; i++) {
            p.a().qp().postSend(wr(i, WrOpcode.SEND).sge(src, (long) i * len, len));
        }
        for (int i = 0; i < n; i++) {
            expect(p.a().sendCq(), i, WcOpcode.SEND);
            WorkCompletion r = expect(p.b().recvCq(), 1000 + i, WcOpcode.RECV);
            assertEquals(len, r.byteLen());
        }
        assertPattern(dst.segment(), 0, (long) n * len, 50, "all messages");
    }
}
