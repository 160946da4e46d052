// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * Shared parameters of the data path suites: path MTUs 256, 1024, 4096 and message sizes 0, 1,
 * MTU-1, MTU, MTU+1, 3*MTU+17 and 64 KiB (SEMANTICS.md, "Data path").
 */
public abstract class AbstractDataPathTest extends AbstractVerbsTest {
    protected static final Mtu[] MTUS = {Mtu.MTU_256, Mtu.MTU_1024, Mtu.MTU_4096};
    protected static final int KIB_64 = 64 * 1024;
    /** An immediate whose four bytes differ, so a byte-order slip shows. */
    protected static final int IMM = 0x0A0B0C0D;

    /** The sizes that matter at {@code mtu}: empty, one byte, either side of a packet, several packets. */
    protected static int[] sizes(Mtu mtu) {
        int b = mtu.bytes();
        return new int[] {0, 1, b - 1, b, b + 1, 3 * b + 17, KIB_64};
    }

    static Stream<Arguments> mtusAndSizes() {
        List<Arguments> l = new ArrayList<>();
        for (Mtu m : MTUS) {
            for (int s : sizes(m)) {
                l.add(Arguments.of(m, s));
            }
        }
        return l.stream();
    }

    /** A smaller set for variants (immediate, invalidate): empty, one byte, just over a packet, several. */
    static Stream<Arguments> mtusAndSomeSizes() {
        List<Arguments> l = new ArrayList<>();
        for (Mtu m : MTUS) {
            for (int s : new int[] {0, 1, m.bytes() + 1, 3 * m.bytes() + 17}) {
                l.add(Arguments.of(m, s));
            }
        }
        return l.stream();
    }

    static Stream<Arguments> mtusAndSgeCounts() {
        List<Arguments> l = new ArrayList<>();
        for (Mtu m : MTUS) {
            for (int n = 1; n <= 4; n++) {
                l.add(Arguments.of(m, n));
            }
        }
        return l.stream();
    }

    /** Splits {@code len} into {@code n} uneven pieces (1:2:3:...), none of them empty when len >= n*(n+1)/2. */
    protected static int[] split(int len, int n) {
        int[] parts = new int[n];
        int weights = n * (n + 1) / 2;
        int used = 0;
        for (int i = 0; i < n - 1; i++) {
            parts[i] = (int) ((long) len * (i + 1) / weights);
            used += parts[i];
        }
        parts[n - 1] = len - used;
        return parts;
    }

    /** Skips unless the QP can take {@code n} gather/scatter entries on both sides. */
    protected final void assumeSges(int n) {
        assumeTrue(deviceAttr().maxSge() >= n && peer().queryDevice().maxSge() >= n, "device has fewer than " + n + " SGEs");
    }

    /** Skips the test when an RDMA READ cannot scatter into {@code n} SGEs ({@code max_sge_rd}). */
    protected final void assumeReadSges(int n) {
        assumeSges(n);
        int max = deviceAttr().maxSgeRd();
        assumeTrue(max >= n, "a READ scatters into at most " + max + " SGEs on this device (max_sge_rd), not " + n);
    }

    /**
     * A sends {@code size} bytes (SEND, or SEND_WITH_IMM carrying {@link #IMM}) to a receive B posted
     * at offset 64 of a larger buffer; checks both completions, the bytes, and that nothing around
     * them was touched. Returns B's receive completion.
     */
    protected final WorkCompletion sendAndCheck(QpPair p, int size, boolean withImm, int seed) {
        MemoryRegion src = register(p.a(), size + 64L, MR_ALL);
        MemoryRegion dst = register(p.b(), size + 256L, MR_ALL);
        fillPattern(src.segment(), 0, size, seed);
        p.b().qp().postRecv(new RecvWorkRequest().wrId(900).sge(dst, 64, size + 64));
        SendWorkRequest w = wr(901, withImm ? WrOpcode.SEND_WITH_IMM : WrOpcode.SEND).immData(IMM);
        if (size > 0) {
            w.sge(src, 0, size);
        }
        p.a().qp().postSend(p.toB(w));
        WorkCompletion s = expect(p.a().sendCq(), 901, WcOpcode.SEND);
        assertEquals(p.a().qpn(), s.qpNum(), "qp_num of the send completion");
        WorkCompletion r = expect(p.b().recvCq(), 900, WcOpcode.RECV);
        assertEquals(size, r.byteLen(), () -> "byte_len of " + r);
        assertEquals(p.b().qpn(), r.qpNum(), "qp_num of the receive completion");
        assertImm(r, withImm);
        assertPattern(dst.segment(), 64, size, seed, "received bytes");
        assertGuardAround(dst, 64, size, "receive buffer");
        return r;
    }

    /**
     * A writes {@code size} bytes (RDMA_WRITE, or WRITE_WITH_IMM carrying {@link #IMM}) to an odd
     * offset of B's memory; checks the completions, the bytes, the guard, and that a plain write
     * consumes no receive while a write with immediate consumes exactly one (RECV_RDMA_WITH_IMM,
     * byte_len = size, its buffer untouched).
     */
    protected final void writeAndCheck(QpPair p, int size, boolean withImm, int seed) {
        MemoryRegion src = register(p.a(), size + 64L, MR_ALL);
        MemoryRegion dst = register(p.b(), size + 256L, MR_ALL);
        MemoryRegion rbuf = register(p.b(), 256, MR_ALL);
        fillPattern(src.segment(), 0, size, seed);
        p.b().qp().postRecv(new RecvWorkRequest().wrId(800).sge(rbuf, 0, 128));
        SendWorkRequest w = wr(801, withImm ? WrOpcode.RDMA_WRITE_WITH_IMM : WrOpcode.RDMA_WRITE).immData(IMM)
                .rdma(addr(dst, 67), dst.rkey());
        if (size > 0) {
            w.sge(src, 0, size);
        }
        p.a().qp().postSend(w);
        WorkCompletion s = expect(p.a().sendCq(), 801, WcOpcode.RDMA_WRITE);
        assertEquals(p.a().qpn(), s.qpNum(), "qp_num of the write completion");
        if (withImm) {
            WorkCompletion r = expect(p.b().recvCq(), 800, WcOpcode.RECV_RDMA_WITH_IMM);
            assertEquals(size, r.byteLen(), () -> "byte_len of " + r);
            assertEquals(p.b().qpn(), r.qpNum());
            assertImm(r, true);
            assertGuardAround(rbuf, 0, 0, "the receive buffer of a WRITE_WITH_IMM");
        } else {
            assertNoCompletion(p.b().recvCq(), 1, "a plain RDMA WRITE consumes no receive");
            if (p.type() == QpType.UC) {
                // A UC write completes when sent, not when placed: over a network the bytes may still be
                // in flight. (RC's completion means placed; a receive completion means placed for both.)
                awaitPattern(dst.segment(), 67, size, seed);
            }
        }
        assertPattern(dst.segment(), 67, size, seed, "written bytes");
        assertGuardAround(dst, 67, size, "write target");
    }

    /** Waits up to 5 s for {@code s[off, off+len)} to hold pattern {@code seed}; the caller asserts after. */
    private static void awaitPattern(MemorySegment s, long off, long len, int seed) {
        long end = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < end) {
            boolean all = true;
            for (long i = 0; i < len && all; i++) {
                all = s.get(ValueLayout.JAVA_BYTE, off + i) == patternByte(seed, i);
            }
            if (all) {
                return;
            }
            Thread.onSpinWait();
        }
    }

    protected static void assertImm(WorkCompletion r, boolean withImm) {
        if (withImm) {
            assertTrue((r.wcFlags() & WcFlag.WITH_IMM) != 0, () -> "WITH_IMM flag missing: " + r);
            assertEquals(Integer.toHexString(IMM), Integer.toHexString(r.immData()), "immediate (byte order kept)");
        } else {
            assertEquals(0, r.wcFlags() & WcFlag.WITH_IMM, () -> "WITH_IMM on a completion without immediate: " + r);
        }
    }
}
