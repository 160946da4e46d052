// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * SEMANTICS.md, Data path: unsignaled sends, sq_sig_all, error completions of unsignaled requests,
 * and the fence.
 */
@Rule({"S-SIG-1", "S-SIG-2"})
public class SignalingAndFenceConformanceTest extends AbstractDataPathTest {

    @ParameterizedTest
    @EnumSource(QpType.class)
    void unsignaledSendsProduceNoCompletion(QpType type) {
        QpPair p = connect(spec(type));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < 4; i++) {
            postRecv(p.b(), 100 + i, dst, i * 128L, 128);
        }
        for (int i = 0; i < 3; i++) {
            p.a().qp().postSend(p.toB(new SendWorkRequest().wrId(i).opcode(WrOpcode.SEND).flags(0).sge(src, 0, 32)));
        }
        p.a().qp().postSend(p.toB(wr(3, WrOpcode.SEND).sge(src, 0, 32)));
        expect(p.a().sendCq(), 3, WcOpcode.SEND);
        assertNoCompletion(p.a().sendCq(), "unsignaled sends complete silently");
        for (int i = 0; i < 4; i++) {
            expect(p.b().recvCq(), 100 + i, WcOpcode.RECV);
        }
    }

    @Test
    void sqSigAllSignalsEveryRequest() {
        QpPair p = connect(spec(QpType.RC).sqSigAllA(true));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < 3; i++) {
            p.a().qp().postSend(new SendWorkRequest().wrId(i).opcode(WrOpcode.RDMA_WRITE).flags(0).sge(src, 0, 32)
                    .rdma(addr(dst, 0), dst.rkey()));
        }
        for (int i = 0; i < 3; i++) {
            expect(p.a().sendCq(), i, WcOpcode.RDMA_WRITE);
        }
        assertNoCompletion(p.a().sendCq(), "exactly one completion per request");
    }

    @Test
    void anUnsignaledRequestThatFailsStillCompletes() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        p.a().qp().postSend(new SendWorkRequest().wrId(7).opcode(WrOpcode.RDMA_WRITE).flags(0).sge(src, 0, 32)
                .rdma(addr(dst, 0), dst.rkey() ^ 0x00FFFF00));
        expect(p.a().sendCq(), 7, WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void unsignaledRequestsFreeTheirSlotsWhenALaterSignaledOneCompletes() {
        QpPair p = connect(spec(QpType.RC).capA(new QpCap(8, 4, 1, 1, 0)));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        int c = p.a().qp().cap().maxSendWr;
        int every = Math.max(1, c / 2);
        for (int i = 0; i < 5 * c; i++) {
            boolean signal = (i + 1) % every == 0;
            p.a().qp().postSend(new SendWorkRequest().wrId(i).opcode(WrOpcode.RDMA_WRITE)
                    .flags(signal ? SendFlag.SIGNALED : 0).sge(src, 0, 16).rdma(addr(dst, 0), dst.rkey()));
            if (signal) {
                expect(p.a().sendCq(), i, WcOpcode.RDMA_WRITE);
            }
        }
    }

    @Test
    void completionsArriveInPostingOrderWhateverTheOpcode() {
        assumeAtomics();
        QpPair p = connect(spec(QpType.RC).mtu(Mtu.MTU_256).cap(new QpCap(32, 16, 1, 1, 0)));
        MemoryRegion local = register(p.a(), 8 * PAGE_SIZE, MR_ALL);
        MemoryRegion remote = register(p.b(), 8 * PAGE_SIZE, MR_ALL);
        putLong(remote, 6 * PAGE_SIZE, 0);
        postRecv(p.b(), 100, remote, 7 * PAGE_SIZE, 4096);
        WrOpcode[] ops = {WrOpcode.RDMA_READ, WrOpcode.RDMA_WRITE, WrOpcode.ATOMIC_FETCH_AND_ADD, WrOpcode.SEND,
            WrOpcode.RDMA_READ, WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.RDMA_WRITE_WITH_IMM};
        postRecv(p.b(), 101, remote, 7 * PAGE_SIZE + 2048, 64);
        for (int i = 0; i < ops.length; i++) {
            SendWorkRequest w = wr(i, ops[i]);
            long off = i * 1024L;
            if (ops[i].isAtomic()) {
                w.sge(local, off, 8);
                if (ops[i] == WrOpcode.ATOMIC_FETCH_AND_ADD) {
                    w.fetchAdd(addr(remote, 6 * PAGE_SIZE), remote.rkey(), 1);
                } else {
                    w.compareAndSwap(addr(remote, 6 * PAGE_SIZE), remote.rkey(), 1, 5);
                }
            } else if (ops[i] == WrOpcode.SEND) {
                w.sge(local, off, 1000);
            } else {
                w.sge(local, off, 1000).rdma(addr(remote, off), remote.rkey());
            }
            p.a().qp().postSend(w);
        }
        for (int i = 0; i < ops.length; i++) {
            expect(p.a().sendCq(), i, ops[i].completionOpcode());
        }
        assertEquals(5, getLong(remote, 6 * PAGE_SIZE), "FETCH_ADD then CMP_SWAP executed in order");
    }

    @Rule("S-SIG-2")
    @ParameterizedTest
    @EnumSource(value = Mtu.class, names = {"MTU_256", "MTU_4096"})
    void fencedWriteWaitsForAnEarlierRead(Mtu mtu) {
        assumeMtu(mtu);
        QpPair p = connect(spec(QpType.RC).mtu(mtu));
        MemoryRegion local = register(p.a(), KIB_64, MR_ALL);
        MemoryRegion remote = register(p.b(), 2L * KIB_64, MR_ALL);
        fillPattern(remote.segment(), 0, KIB_64, 95);
        // READ remote[0, 64K) into local, then WRITE local to remote[64K, 128K): with the fence the
        // WRITE must carry what the READ brought, never the stale local bytes
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_READ).sge(local, 0, KIB_64).rdma(addr(remote, 0), remote.rkey()));
        p.a().qp().postSend(wr(2, WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED | SendFlag.FENCE)
                .sge(local, 0, KIB_64).rdma(addr(remote, KIB_64), remote.rkey()));
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_READ);
        expect(p.a().sendCq(), 2, WcOpcode.RDMA_WRITE);
        assertPattern(remote.segment(), KIB_64, KIB_64, 95, "fenced WRITE after READ");
    }

    @Rule("S-SIG-2")
    @Test
    void fencedSendWaitsForAnEarlierAtomic() {
        assumeAtomics();
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion local = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion remote = register(p.b(), PAGE_SIZE, MR_ALL);
        putLong(remote, 0, 0x1122334455667788L);
        postRecv(p.b(), 100, remote, 512, 64);
        p.a().qp().postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(local, 0, 8)
                .fetchAdd(addr(remote, 0), remote.rkey(), 1));
        p.a().qp().postSend(wr(2, WrOpcode.SEND).flags(SendFlag.SIGNALED | SendFlag.FENCE).sge(local, 0, 8));
        expect(p.a().sendCq(), 1, WcOpcode.FETCH_ADD);
        expect(p.a().sendCq(), 2, WcOpcode.SEND);
        expect(p.b().recvCq(), 100, WcOpcode.RECV);
        assertEquals(0x1122334455667788L, getLong(remote, 512), "fenced SEND carried the atomic's result");
    }
}
