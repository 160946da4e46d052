// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.verbs.CompletionQueue;
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

/**
 * SEMANTICS.md, "A duplicate request is never executed twice" and the "loss/reorder/duplication"
 * gap: RC hides a bad network completely. It matters on a setup with {@link Capability#LOSSY_LINK}
 * (devices behind links that lose, duplicate, reorder and corrupt packets in both directions), and
 * there the suite fails if no fault of each kind happened while it ran; on a clean link it holds
 * trivially. Short ACK timeouts keep recovery fast.
 */
@Rule({"S-REL-1", "S-REL-2"})
public class LossAndDuplicationConformanceTest extends AbstractDataPathTest {
    /** Requests in flight at once. */
    private static final int WINDOW = 16;
    private static ConformanceSetup.Faults faultsBefore = ConformanceSetup.Faults.NONE;

    @BeforeParameterizedClassInvocation
    static void countFaults(ConformanceSetup s) {
        faultsBefore = s.faults();
    }

    /** A fault suite that saw no faults proves nothing. */
    @AfterParameterizedClassInvocation
    static void faultsReallyHappened(ConformanceSetup s) {
        if (s.has(Capability.LOSSY_LINK)) {
            ConformanceSetup.Faults f = s.faults().since(faultsBefore);
            assertTrue(f.lost() > 0 && f.duplicated() > 0 && f.reordered() > 0,
                    () -> "too few faults on " + s.name() + " while the suite ran: " + f);
        }
    }

    private QpPair pair(Mtu mtu) {
        assumeMtu(mtu);
        // timeout 14: 4.096 us * 2^14 = 67 ms, so a lost tail costs little, while 8 tries (0.5 s) outlast a
        // receive thread starved on a busy machine (timeout 12, 134 ms in all, did not over real UDP sockets)
        return connect(spec(QpType.RC).mtu(mtu).timeout(14).retryCnt(7).rnrRetry(7).minRnrTimerB(1)
                .cap(new QpCap(64, 256, 1, 1, 0)).cqe(512));
    }

    /** Posts {@code n} requests through {@code post} keeping {@link #WINDOW} in flight; each must succeed in order. */
    private static void pipeline(CompletionQueue cq, int n, WcOpcode op, LongConsumer post, LongConsumer completed) {
        for (long i = 0; i < n; i++) {
            if (i >= WINDOW) {
                expect(cq, i - WINDOW, op);
                completed.accept(i - WINDOW);
            }
            post.accept(i);
        }
        for (long i = Math.max(0, n - WINDOW); i < n; i++) {
            expect(cq, i, op);
            completed.accept(i);
        }
    }

    private static int sizeOf(long i, Mtu mtu) {
        return (int) ((i * 977) % (3L * mtu.bytes())) + 1;
    }

    @ParameterizedTest
    @EnumSource(value = Mtu.class, names = {"MTU_256", "MTU_1024"})
    void sendsArriveExactlyOnceAndInOrder(Mtu mtu) {
        QpPair p = pair(mtu);
        int n = 100;
        int slot = 3 * mtu.bytes();
        MemoryRegion src = register(p.a(), (long) n * slot, MR_ALL);
        MemoryRegion dst = register(p.b(), 2L * n * slot, MR_ALL);
        fillPattern(src.segment(), 0, (long) n * slot, 120);
        for (int i = 0; i < 2 * n; i++) { // twice as many receives: a duplicate delivery would use one
            postRecv(p.b(), 1000 + i, dst, (long) i * slot, slot);
        }
        SendWorkRequest w = new SendWorkRequest().opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED);
        pipeline(p.a().sendCq(), n, WcOpcode.SEND,
                i -> p.a().qp().postSend(w.clear().wrId(i).sge(src, i * slot, sizeOf(i, mtu))), i -> { });
        for (int i = 0; i < n; i++) {
            WorkCompletion r = expect(p.b().recvCq(), 1000 + i, WcOpcode.RECV);
            assertEquals(sizeOf(i, mtu), r.byteLen(), "message " + i);
            assertPattern(dst.segment(), (long) i * slot, sizeOf(i, mtu), 120, (long) i * slot, "message " + i);
        }
        assertNoCompletion(p.b().recvCq(), "every message is delivered exactly once");
    }

    @ParameterizedTest
    @EnumSource(value = Mtu.class, names = {"MTU_256", "MTU_1024"})
    void writesThenReadsSeeExactlyTheWrittenBytes(Mtu mtu) {
        QpPair p = pair(mtu);
        int n = 48;
        int len = 2 * mtu.bytes() + 100;
        MemoryRegion src = register(p.a(), (long) n * len, MR_ALL);
        MemoryRegion back = register(p.a(), (long) n * len, MR_ALL);
        MemoryRegion remote = register(p.b(), (long) n * len, MR_ALL);
        fillPattern(src.segment(), 0, (long) n * len, 121);
        SendWorkRequest w = new SendWorkRequest().flags(SendFlag.SIGNALED);
        pipeline(p.a().sendCq(), n, WcOpcode.RDMA_WRITE, i -> p.a().qp().postSend(w.clear().wrId(i)
                .opcode(WrOpcode.RDMA_WRITE).sge(src, i * len, len).rdma(addr(remote, i * len), remote.rkey())), i -> { });
        assertPattern(remote.segment(), 0, (long) n * len, 121, "written");
        pipeline(p.a().sendCq(), n, WcOpcode.RDMA_READ, i -> p.a().qp().postSend(w.clear().wrId(i)
                .opcode(WrOpcode.RDMA_READ).sge(back, i * len, len).rdma(addr(remote, i * len), remote.rkey())), i -> { });
        assertPattern(back.segment(), 0, (long) n * len, 121, "read back");
    }

    @Rule("S-REL-1")
    @Test
    void fetchAndAddsExecuteExactlyOnce() {
        QpPair p = pair(Mtu.MTU_1024);
        int n = 300;
        MemoryRegion results = register(p.a(), 8L * n, MR_ALL);
        MemoryRegion counter = register(p.b(), 64, MR_ALL);
        putLong(counter, 0, 0);
        SendWorkRequest w = new SendWorkRequest().flags(SendFlag.SIGNALED);
        pipeline(p.a().sendCq(), n, WcOpcode.FETCH_ADD,
                i -> p.a().qp().postSend(w.clear().wrId(i).sge(results, 8 * i, 8)
                        .fetchAdd(addr(counter, 0), counter.rkey(), 1)),
                i -> assertEquals(i, getLong(results, 8 * i), "FETCH_ADD #" + i + " returned a replayed or lost value"));
        assertEquals(n, getLong(counter, 0), "no FETCH_ADD executed twice or lost");
    }

    @Rule("S-REL-1")
    @Test
    void duplicateCompareAndSwapReturnsTheSavedOriginal() {
        QpPair p = pair(Mtu.MTU_1024);
        int n = 300;
        MemoryRegion results = register(p.a(), 8L * n, MR_ALL);
        MemoryRegion counter = register(p.b(), 64, MR_ALL);
        putLong(counter, 0, 0);
        SendWorkRequest w = new SendWorkRequest().flags(SendFlag.SIGNALED);
        // CMP_SWAP(i -> i+1): re-executing a duplicate would return i+1 instead of i
        pipeline(p.a().sendCq(), n, WcOpcode.COMP_SWAP,
                i -> p.a().qp().postSend(w.clear().wrId(i).sge(results, 8 * i, 8)
                        .compareAndSwap(addr(counter, 0), counter.rkey(), i, i + 1)),
                i -> assertEquals(i, getLong(results, 8 * i), "CMP_SWAP #" + i));
        assertEquals(n, getLong(counter, 0));
    }

    @Test
    void writesWithImmediateConsumeExactlyOneReceiveEach() {
        QpPair p = pair(Mtu.MTU_256);
        int n = 100;
        MemoryRegion src = register(p.a(), 1024, MR_ALL);
        MemoryRegion remote = register(p.b(), 1024, MR_ALL);
        fillPattern(src.segment(), 0, 1000, 122);
        for (int i = 0; i < 2 * n; i++) {
            p.b().qp().postRecv(new RecvWorkRequest().wrId(1000 + i));
        }
        SendWorkRequest w = new SendWorkRequest().flags(SendFlag.SIGNALED).opcode(WrOpcode.RDMA_WRITE_WITH_IMM);
        pipeline(p.a().sendCq(), n, WcOpcode.RDMA_WRITE, i -> p.a().qp().postSend(w.clear().wrId(i).immData((int) i)
                .sge(src, 0, 1000).rdma(addr(remote, 0), remote.rkey())), i -> { });
        for (int i = 0; i < n; i++) {
            WorkCompletion r = expect(p.b().recvCq(), 1000 + i, WcOpcode.RECV_RDMA_WITH_IMM);
            assertEquals(i, r.immData(), "immediate of write " + i);
        }
        assertNoCompletion(p.b().recvCq(), "every WRITE_WITH_IMM consumes exactly one receive");
        assertPattern(remote.segment(), 0, 1000, 122, "written");
    }
}
