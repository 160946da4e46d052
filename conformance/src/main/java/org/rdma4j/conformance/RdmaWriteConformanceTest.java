// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
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

/** SEMANTICS.md, Data path: RDMA WRITE and WRITE with immediate on RC. */
@Rule({"S-DATA-2", "S-DATA-3"})
public class RdmaWriteConformanceTest extends AbstractDataPathTest {

    @ParameterizedTest(name = "MTU {0}, {1} bytes")
    @MethodSource("mtusAndSizes")
    void writePlacesExactlyTheBytes(Mtu mtu, int size) {
        assumeMtu(mtu);
        writeAndCheck(connect(spec(QpType.RC).mtu(mtu)), size, false, size + 2);
    }

    @ParameterizedTest(name = "MTU {0}, {1} bytes")
    @MethodSource("mtusAndSomeSizes")
    void writeWithImmediateConsumesAReceiveAndReportsTheImmediate(Mtu mtu, int size) {
        assumeMtu(mtu);
        writeAndCheck(connect(spec(QpType.RC).mtu(mtu)), size, true, size + 3);
    }

    @Test
    void writeConsumesNoReceive() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        postRecv(p.b(), 1, dst, 2048, 64);
        for (int i = 0; i < 4; i++) {
            p.a().qp().postSend(wr(10 + i, WrOpcode.RDMA_WRITE).sge(src, 0, 100).rdma(addr(dst, 0), dst.rkey()));
            expect(p.a().sendCq(), 10 + i, WcOpcode.RDMA_WRITE);
        }
        assertNoCompletion(p.b().recvCq(), "RDMA WRITE must not consume receives");
        // the receive is still there for the next SEND
        p.a().qp().postSend(wr(20, WrOpcode.SEND).sge(src, 0, 8));
        expect(p.a().sendCq(), 20, WcOpcode.SEND);
        expect(p.b().recvCq(), 1, WcOpcode.RECV);
    }

    @Test
    void zeroLengthWriteWithImmediateNeedsNoReceiveBuffer() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        p.b().qp().postRecv(new RecvWorkRequest().wrId(1));
        p.a().qp().postSend(wr(2, WrOpcode.RDMA_WRITE_WITH_IMM).immData(IMM).rdma(addr(dst, 0), dst.rkey()));
        expect(p.a().sendCq(), 2, WcOpcode.RDMA_WRITE);
        WorkCompletion r = expect(p.b().recvCq(), 1, WcOpcode.RECV_RDMA_WITH_IMM);
        assertEquals(0, r.byteLen());
        assertImm(r, true);
        assertGuardAround(dst, 0, 0, "target of an empty write");
    }

    @ParameterizedTest(name = "MTU {0}, {1} SGEs")
    @MethodSource("mtusAndSgeCounts")
    void writeGathersSeveralSges(Mtu mtu, int n) {
        assumeMtu(mtu);
        assumeSges(n);
        QpPair p = connect(spec(QpType.RC).mtu(mtu).cap(new QpCap(16, 16, n, n, 0)));
        int total = 3 * mtu.bytes() + 17;
        int[] parts = split(total, n);
        MemoryRegion src = register(p.a(), total + 64L * n + 64, MR_ALL);
        MemoryRegion dst = register(p.b(), total + 256L, MR_ALL);
        SendWorkRequest w = wr(1, WrOpcode.RDMA_WRITE).rdma(addr(dst, 100), dst.rkey());
        long off = 5;
        long from = 0;
        for (int len : parts) {
            fillPattern(src.segment(), off, len, 60, from);
            w.sge(src, off, len);
            off += len + 64;
            from += len;
        }
        p.a().qp().postSend(w);
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        assertPattern(dst.segment(), 100, total, 60, "gathered write");
        assertGuardAround(dst, 100, total, "write target");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 16, -1})
    void inlineWriteCopiesTheDataAtPostTime(int sizeOrMax) {
        int want = Math.min(256, deviceAttr().maxInlineData());
        assumeTrue(want > 0, "device has no inline data");
        QpPair p = connect(spec(QpType.RC).capA(new QpCap(16, 16, 1, 1, want)));
        int size = sizeOrMax < 0 ? p.a().qp().cap().maxInlineData : sizeOrMax;
        MemoryRegion src = register(p.a(), size + 64L, MR_ALL);
        MemoryRegion dst = register(p.b(), size + 128L, MR_ALL);
        fillPattern(src.segment(), 0, size, 61);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED | SendFlag.INLINE)
                .sge(src, 0, size).rdma(addr(dst, 64), dst.rkey()));
        fillPattern(src.segment(), 0, size, 62);
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        assertPattern(dst.segment(), 64, size, 61, "inline write as it was at post time");
        assertGuardAround(dst, 64, size, "write target");
    }

    @Test
    void writesToDifferentOffsetsLandWhereAddressed() {
        QpPair p = connect(spec(QpType.RC).mtu(Mtu.MTU_256));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), 4 * PAGE_SIZE, MR_ALL);
        fillPattern(src.segment(), 0, PAGE_SIZE, 63);
        long[] offs = {1, 2 * PAGE_SIZE - 3, 3 * PAGE_SIZE + 255};
        for (int i = 0; i < offs.length; i++) {
            p.a().qp().postSend(wr(i, WrOpcode.RDMA_WRITE).sge(src, 0, 300).rdma(addr(dst, offs[i]), dst.rkey()));
        }
        for (int i = 0; i < offs.length; i++) {
            expect(p.a().sendCq(), i, WcOpcode.RDMA_WRITE);
            assertPattern(dst.segment(), offs[i], 300, 63, "write " + i);
        }
        assertGuard(dst.segment(), 0, 1, "start");
        assertGuard(dst.segment(), 301, offs[1], "between writes 0 and 1");
        assertGuard(dst.segment(), offs[1] + 300, offs[2], "between writes 1 and 2");
        assertGuard(dst.segment(), offs[2] + 300, dst.length(), "after write 2");
    }
}
