// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/**
 * SEMANTICS.md, Data path: atomics on 8 bytes. Values are 64-bit integers in the memory's native
 * order, as a C program on either end sees them.
 */
@Rule("S-DATA-5")
public class AtomicConformanceTest extends AbstractDataPathTest {
    private static final long ONES = 0x0101010101010101L;
    private static final long TWOS = 0x0202020202020202L;
    private static final long THREES = 0x0303030303030303L;

    private QpPair p;
    private MemoryRegion local;
    private MemoryRegion remote;

    @BeforeEach
    void needsAtomics() {
        assumeAtomics();
    }

    private void setUp(long target, long localInit) {
        p = connect(spec(QpType.RC));
        local = register(p.a(), PAGE_SIZE, MR_ALL);
        remote = register(p.b(), PAGE_SIZE, MR_ALL);
        putLong(remote, 64, target);
        putLong(local, 128, localInit);
    }

    private WorkCompletion fetchAdd(long add) {
        p.a().qp().postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(local, 128, 8)
                .fetchAdd(addr(remote, 64), remote.rkey(), add));
        return expect(p.a().sendCq(), 1, WcOpcode.FETCH_ADD);
    }

    private WorkCompletion cmpSwap(long compare, long swap) {
        p.a().qp().postSend(new SendWorkRequest().wrId(2).flags(SendFlag.SIGNALED).sge(local, 128, 8)
                .compareAndSwap(addr(remote, 64), remote.rkey(), compare, swap));
        return expect(p.a().sendCq(), 2, WcOpcode.COMP_SWAP);
    }

    private void assertUntouchedAround() {
        assertGuard(remote.segment(), 0, 64, "before the atomic target");
        assertGuard(remote.segment(), 72, remote.length(), "after the atomic target");
        assertGuard(local.segment(), 0, 128, "before the result slot");
        assertGuard(local.segment(), 136, local.length(), "after the result slot");
    }

    @Test
    void fetchAddAddsAndReturnsTheOriginalValue() {
        setUp(ONES, TWOS);
        WorkCompletion wc = fetchAdd(TWOS);
        assertEquals(8, wc.byteLen(), "byte_len of an atomic");
        assertEquals(Long.toHexString(THREES), Long.toHexString(getLong(remote, 64)), "target after FETCH_ADD");
        assertEquals(Long.toHexString(ONES), Long.toHexString(getLong(local, 128)), "returned original");
        assertUntouchedAround();
    }

    @Test
    void compareAndSwapWithAMismatchingCompareDoesNotSwap() {
        setUp(ONES, TWOS);
        WorkCompletion wc = cmpSwap(TWOS, 0);
        assertEquals(8, wc.byteLen());
        assertEquals(Long.toHexString(ONES), Long.toHexString(getLong(remote, 64)), "target unchanged");
        assertEquals(Long.toHexString(ONES), Long.toHexString(getLong(local, 128)), "returned original");
        assertUntouchedAround();
    }

    @Test
    void compareAndSwapWithAMatchingCompareSwaps() {
        setUp(ONES, TWOS);
        cmpSwap(ONES, 0);
        assertEquals(0L, getLong(remote, 64), "target swapped to 0");
        assertEquals(Long.toHexString(ONES), Long.toHexString(getLong(local, 128)), "returned original");
        assertUntouchedAround();
    }

    @ParameterizedTest(name = "{0} + {1}")
    @CsvSource({"0xFF, 1, 0x100", "0xFFFFFFFF, 1, 0x100000000", "0xFFFFFFFFFFFFFFFF, 1, 0",
            "0x7FFFFFFFFFFFFFFF, 1, 0x8000000000000000", "0x1234, 0xFFFFFFFFFFFFFFFF, 0x1233"})
    void fetchAddIsA64BitAdditionInNativeOrder(String start, String add, String expected) {
        long s = parse(start);
        long a = parse(add);
        long e = parse(expected);
        setUp(s, 0);
        fetchAdd(a);
        assertEquals(Long.toHexString(e), Long.toHexString(getLong(remote, 64)));
        assertEquals(Long.toHexString(s), Long.toHexString(getLong(local, 128)));
    }

    private static long parse(String v) {
        return v.startsWith("0x") ? Long.parseUnsignedLong(v.substring(2), 16) : Long.parseLong(v);
    }

    @Test
    void outstandingAtomicsExecuteInOrder() {
        p = connect(spec(QpType.RC).cap(new QpCap(32, 16, 1, 1, 0)));
        local = register(p.a(), PAGE_SIZE, MR_ALL);
        remote = register(p.b(), PAGE_SIZE, MR_ALL);
        putLong(remote, 0, 0);
        int n = 16;
        for (int i = 0; i < n; i++) {
            p.a().qp().postSend(new SendWorkRequest().wrId(i).flags(SendFlag.SIGNALED).sge(local, 8L * i, 8)
                    .fetchAdd(addr(remote, 0), remote.rkey(), 1));
        }
        for (int i = 0; i < n; i++) {
            expect(p.a().sendCq(), i, WcOpcode.FETCH_ADD);
            assertEquals(i, getLong(local, 8L * i), "FETCH_ADD #" + i + " saw the previous ones");
        }
        assertEquals(n, getLong(remote, 0));
    }

    @Test
    void atomicsFromTwoQpsAreAtomicAgainstEachOther() throws Exception {
        ProtectionDomain pdB = allocPd(peer());
        QpPair p1 = connect(spec(QpType.RC).pdB(pdB));
        QpPair p2 = connect(spec(QpType.RC).pdB(pdB));
        MemoryRegion target = register(pdB, PAGE_SIZE, MR_ALL);
        putLong(target, 0, 0);
        int perQp = 300;
        MemoryRegion res1 = register(p1.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion res2 = register(p2.a(), PAGE_SIZE, MR_ALL);
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        List<CompletableFuture<Void>> runs = List.of(
                CompletableFuture.runAsync(() -> hammer(p1, res1, target, perQp, seen)),
                CompletableFuture.runAsync(() -> hammer(p2, res2, target, perQp, seen)));
        for (CompletableFuture<Void> f : runs) {
            f.get(2 * TIMEOUT_MS, TimeUnit.MILLISECONDS);
        }
        assertEquals(2L * perQp, getLong(target, 0), "no increment lost");
        Set<Long> want = new HashSet<>();
        for (long i = 0; i < 2L * perQp; i++) {
            want.add(i);
        }
        assertEquals(want, seen, "every FETCH_ADD saw a distinct value");
    }

    /** Runs on its own thread: one QP, one CQ, no shared fixture state. */
    private static void hammer(QpPair q, MemoryRegion res, MemoryRegion target, int n, Set<Long> seen) {
        SendWorkRequest w = new SendWorkRequest().flags(SendFlag.SIGNALED).sge(res, 0, 8);
        for (int i = 0; i < n; i++) {
            q.a().qp().postSend(w.wrId(i).fetchAdd(addr(target, 0), target.rkey(), 1));
            expect(q.a().sendCq(), i, WcOpcode.FETCH_ADD);
            assertTrue(seen.add(getLong(res, 0)), "value seen twice");
        }
    }
}
