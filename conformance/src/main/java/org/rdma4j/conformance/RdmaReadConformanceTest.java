// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/** SEMANTICS.md, Data path: RDMA READ on RC. */
@Rule("S-DATA-4")
public class RdmaReadConformanceTest extends AbstractDataPathTest {

    private static void read(QpPair p, long wrId, MemoryRegion local, long localOff, int size, MemoryRegion remote,
                             long remoteOff) {
        SendWorkRequest w = wr(wrId, WrOpcode.RDMA_READ).rdma(addr(remote, remoteOff), remote.rkey());
        if (size > 0) {
            w.sge(local, localOff, size);
        }
        p.a().qp().postSend(w);
    }

    @ParameterizedTest(name = "MTU {0}, {1} bytes")
    @MethodSource("mtusAndSizes")
    void readFetchesExactlyTheBytes(Mtu mtu, int size) {
        assumeMtu(mtu);
        QpPair p = connect(spec(QpType.RC).mtu(mtu));
        MemoryRegion remote = register(p.b(), size + 256L, MR_ALL);
        MemoryRegion local = register(p.a(), size + 256L, MR_ALL);
        fillPattern(remote.segment(), 33, size, size + 4);
        read(p, 1, local, 64, size, remote, 33);
        WorkCompletion wc = expect(p.a().sendCq(), 1, WcOpcode.RDMA_READ);
        assertEquals(size, wc.byteLen(), () -> "byte_len of " + wc);
        assertEquals(p.a().qpn(), wc.qpNum());
        assertPattern(local.segment(), 64, size, size + 4, "read bytes");
        assertGuardAround(local, 64, size, "read destination");
        assertNoCompletion(p.b().recvCq(), 1, "a READ consumes no receive");
    }

    @ParameterizedTest(name = "MTU {0}, {1} SGEs")
    @MethodSource("mtusAndSgeCounts")
    void readScattersIntoSeveralSges(Mtu mtu, int n) {
        assumeMtu(mtu);
        assumeReadSges(n);
        QpPair p = connect(spec(QpType.RC).mtu(mtu).cap(new QpCap(16, 16, n, n, 0)));
        int total = 3 * mtu.bytes() + 17;
        int[] parts = split(total, n);
        MemoryRegion remote = register(p.b(), total, MR_ALL);
        MemoryRegion local = register(p.a(), total + 128L * n + 64, MR_ALL);
        fillPattern(remote.segment(), 0, total, 70);
        SendWorkRequest w = wr(1, WrOpcode.RDMA_READ).rdma(addr(remote, 0), remote.rkey());
        long[] offs = new long[n];
        long off = 64;
        for (int i = 0; i < n; i++) {
            offs[i] = off;
            w.sge(local, off, parts[i]);
            off += parts[i] + 128;
        }
        p.a().qp().postSend(w);
        assertEquals(total, expect(p.a().sendCq(), 1, WcOpcode.RDMA_READ).byteLen());
        long from = 0;
        long guardFrom = 0;
        for (int i = 0; i < n; i++) {
            assertGuard(local.segment(), guardFrom, offs[i], "before scatter entry " + i);
            assertPattern(local.segment(), offs[i], parts[i], 70, from, "scatter entry " + i);
            from += parts[i];
            guardFrom = offs[i] + parts[i];
        }
        assertGuard(local.segment(), guardFrom, local.length(), "after the last scatter entry");
    }

    @Test
    void manyOutstandingReadsCompleteInOrderWithOneInitiatorSlot() {
        QpPair p = connect(spec(QpType.RC).mtu(Mtu.MTU_256).maxRdAtomic(1).cap(new QpCap(32, 16, 1, 1, 0)));
        int n = 16;
        int len = 600;
        MemoryRegion remote = register(p.b(), (long) n * len, MR_ALL);
        MemoryRegion local = register(p.a(), (long) n * len, MR_ALL);
        fillPattern(remote.segment(), 0, (long) n * len, 71);
        for (int i = 0; i < n; i++) {
            // read chunk i into slot n-1-i: a mix-up of responses shows
            read(p, i, local, (long) (n - 1 - i) * len, len, remote, (long) i * len);
        }
        for (int i = 0; i < n; i++) {
            assertEquals(len, expect(p.a().sendCq(), i, WcOpcode.RDMA_READ).byteLen());
            assertPattern(local.segment(), (long) (n - 1 - i) * len, len, 71, (long) i * len, "read " + i);
        }
    }

    @Test
    void readFromARemoteReadOnlyRegionWorks() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion remote = register(p.b(), PAGE_SIZE, Access.REMOTE_READ);
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        fillPattern(remote.segment(), 0, 500, 72);
        read(p, 1, local, 0, 500, remote, 0);
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_READ);
        assertPattern(local.segment(), 0, 500, 72, "read from a REMOTE_READ-only MR");
    }

    @Test
    void readsAndWritesInterleaveInOrder() {
        QpPair p = connect(spec(QpType.RC).mtu(Mtu.MTU_1024));
        MemoryRegion remote = register(p.b(), 4 * PAGE_SIZE, MR_ALL);
        MemoryRegion local = register(p.a(), 4 * PAGE_SIZE, MR_ALL);
        fillPattern(local.segment(), 0, 3000, 73);
        // write, then read back what was written: RC executes requests in order at the responder
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(local, 0, 3000).rdma(addr(remote, 0), remote.rkey()));
        read(p, 2, local, PAGE_SIZE, 3000, remote, 0);
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        expect(p.a().sendCq(), 2, WcOpcode.RDMA_READ);
        assertPattern(local.segment(), PAGE_SIZE, 3000, 73, "read after write");
    }
}
