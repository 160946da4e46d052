// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.QpLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WrOpcode;
import org.rdma4j.verbs.spi.SendWrRules;

/**
 * Encodes a chain of {@link SendWorkRequest}s into {@code struct ibv_send_wr} and {@code struct ibv_sge}
 * arrays in native memory that it keeps for the life of its queue pair, so a post allocates nothing
 * (the arrays grow, once, when a longer chain or more SGEs than ever before are posted). Inline data
 * given as a segment of its own ({@link SendWorkRequest#inlineData()}, which may be on the heap) is
 * copied into a staging area and posted as one SGE with {@code IBV_SEND_INLINE}, as the provider copies
 * inline SGEs while it posts. Not thread safe: its queue pair serializes posts.
 */
final class SendWrEncoder extends WrChain {
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private final QpType type;
    private final int maxInline;
    private Arena stagingArena;
    private MemorySegment staging;
    /** BIND_MW requests in the chain last encoded. */
    int binds;

    SendWrEncoder(QpType type, int maxSge, int maxInline) {
        super(SEND_WR_SIZE, SWR_NEXT, SWR_SG_LIST, maxSge, 4);
        this.type = type;
        this.maxInline = maxInline;
        growStaging(0, capacity());
    }

    /**
     * Encodes the chain starting at {@code head}, checking each request as {@code ibv_post_send} would
     * before the provider sees it. A request the rules refuse ends the chain: the ones before it are
     * encoded (to be posted, as a provider posts the requests before its {@code bad_wr}) and the refusal
     * is returned, to be thrown after them.
     *
     * @return null, or the EINVAL refusal of the first request the rules refuse
     * @throws PostException EINVAL when the first request of the chain is refused (nothing to post)
     */
    PostException encode(SendWorkRequest head) {
        int n = 0;
        binds = 0;
        PostException refused = null;
        for (SendWorkRequest w = head; w != null; w = w.next()) {
            if (n == capacity()) {
                growWithStaging(capacity() * 2);
            }
            String why = SendWrRules.check(type, w, maxSge, maxInline);
            if (why != null) {
                refused = new PostException(Errno.EINVAL, why, w, n);
                break;
            }
            encodeOne(n, w);
            n++;
        }
        if (n == 0) {
            throw refused;
        }
        end(n);
        return refused;
    }

    private void encodeOne(int i, SendWorkRequest w) {
        long base = link(i);
        MemorySegment m = wrs();
        WrOpcode op = w.opcode();
        int flags = w.sendFlags();
        m.set(LONG, base + SWR_WR_ID, w.wrId());
        MemorySegment inline = w.inlineData();
        int numSge;
        if (inline != null) {
            long len = inline.byteSize();
            long at = (long) i * maxInline;
            MemorySegment.copy(inline, 0, staging, at, len);
            MemorySegment sges = sges();
            long sgeBase = sgeBase(i);
            sges.set(LONG, sgeBase + SGE_ADDR, staging.address() + at);
            sges.set(INT, sgeBase + SGE_LENGTH, (int) len);
            sges.set(INT, sgeBase + SGE_LKEY, 0);
            numSge = 1;
            flags |= SendFlag.INLINE;
        } else {
            numSge = w.numSge();
            putSges(i, w, numSge);
        }
        m.set(INT, base + SWR_NUM_SGE, numSge);
        m.set(INT, base + SWR_OPCODE, op.value());
        m.set(INT, base + SWR_SEND_FLAGS, flags);
        switch (op) {
            case SEND_WITH_IMM, RDMA_WRITE_WITH_IMM -> m.set(BE_INT, base + SWR_IMM_DATA, w.immData());
            case SEND_WITH_INV, LOCAL_INV -> m.set(INT, base + SWR_INVALIDATE_RKEY, w.invalidateRkey());
            default -> m.set(INT, base + SWR_IMM_DATA, 0);
        }
        switch (op) {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ -> {
                m.set(LONG, base + SWR_RDMA_REMOTE_ADDR, w.remoteAddr());
                m.set(INT, base + SWR_RDMA_RKEY, w.rkey());
            }
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> {
                m.set(LONG, base + SWR_ATOMIC_REMOTE_ADDR, w.remoteAddr());
                m.set(LONG, base + SWR_ATOMIC_COMPARE_ADD, w.compareAdd());
                m.set(LONG, base + SWR_ATOMIC_SWAP, w.swap());
                m.set(INT, base + SWR_ATOMIC_RKEY, w.rkey());
            }
            case BIND_MW -> {
                encodeBind(m, base, w);
                binds++;
            }
            default -> { }
        }
        if (type == QpType.UD) {
            if (!(w.ah() instanceof NativeAddressHandle ah)) {
                throw new PostException(Errno.EINVAL, "the address handle is not one of the native provider", w, i);
            }
            m.set(LONG, base + SWR_UD_AH, ah.handle().address());
            m.set(INT, base + SWR_UD_REMOTE_QPN, w.remoteQpn());
            m.set(INT, base + SWR_UD_REMOTE_QKEY, w.remoteQkey());
        }
    }

    private static void encodeBind(MemorySegment m, long base, SendWorkRequest w) {
        MemoryWindow mw = w.mw();
        if (!(mw instanceof NativeHandle nmw) || mw.isClosed()) {
            throw new IllegalStateException("BIND_MW work request " + w.wrId() + ": the window is closed or not native");
        }
        MemoryRegion mr = w.bindMr();
        long mrHandle = 0;
        if (mr != null) {
            if (!(mr instanceof NativeHandle nmr) || mr.isClosed()) {
                throw new IllegalStateException("BIND_MW work request " + w.wrId() + ": the region is closed or not native");
            }
            mrHandle = nmr.handle().address();
        }
        m.set(LONG, base + SWR_BIND_MW_MW, nmw.handle().address());
        m.set(INT, base + SWR_BIND_MW_RKEY, w.bindRkey());
        m.set(LONG, base + SWR_BIND_MW_MR, mrHandle);
        m.set(LONG, base + SWR_BIND_MW_ADDR, w.bindAddr());
        m.set(LONG, base + SWR_BIND_MW_LENGTH, w.bindLength());
        m.set(INT, base + SWR_BIND_MW_ACCESS, w.bindAccess());
    }

    /** Room for {@code n} requests (on the first post of a longer chain): larger arrays and staging area. */
    private void growWithStaging(int n) {
        int old = capacity();
        grow(n);
        growStaging(old, n);
    }

    /**
     * A staging area for {@code n} requests' inline data in place of the one for {@code old}: what the
     * first {@code old} requests staged is copied, and their SGEs that pointed into the old area are
     * re-pointed into the new one; the old area is freed.
     */
    private void growStaging(int old, int n) {
        if (maxInline <= 0) {
            staging = MemorySegment.NULL;
            return;
        }
        Arena next = Arena.ofShared();
        MemorySegment st = next.allocate((long) n * maxInline, 8);
        if (stagingArena != null) {
            MemorySegment.copy(staging, 0, st, 0, (long) old * maxInline);
            MemorySegment wrs = wrs();
            MemorySegment sges = sges();
            long oldStaging = staging.address();
            for (int i = 0; i < old; i++) {
                int numSge = wrs.get(INT, wrBase(i) + SWR_NUM_SGE);
                long sgeBase = sgeBase(i);
                for (int k = 0; k < numSge; k++) {
                    long a = sges.get(LONG, sgeBase + k * SGE_SIZE + SGE_ADDR);
                    if (a >= oldStaging && a < oldStaging + (long) old * maxInline) {
                        sges.set(LONG, sgeBase + k * SGE_SIZE + SGE_ADDR, a - oldStaging + st.address());
                    }
                }
            }
            stagingArena.close();
        }
        stagingArena = next;
        staging = st;
    }

    /** Frees the native arrays; the encoder cannot be used afterwards. */
    @Override
    void close() {
        super.close();
        if (stagingArena != null) {
            stagingArena.close();
        }
    }
}
