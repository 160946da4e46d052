// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.QpLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.RecvWorkRequest;

/**
 * Encodes a chain of {@link RecvWorkRequest}s into {@code struct ibv_recv_wr} and {@code struct ibv_sge}
 * arrays in native memory kept for the life of its queue (a QP's receive queue or an SRQ), so a post
 * allocates nothing; the arrays grow once when a longer chain than ever before is posted. Not thread
 * safe: its queue serializes posts.
 */
final class RecvWrEncoder {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private final int maxSge;
    private Arena arena;
    private int capacity;
    private MemorySegment wrs;
    private long wrsAddress;
    private MemorySegment sges;
    /** {@code struct ibv_recv_wr *bad_wr}. */
    final MemorySegment badWr;
    /** {@code badWr.address()}, what a post passes. */
    final long badWrAddress;
    private final Arena badWrArena = Arena.ofShared();

    RecvWrEncoder(int maxSge) {
        this.maxSge = Math.max(1, maxSge);
        this.badWr = badWrArena.allocate(ValueLayout.ADDRESS);
        this.badWrAddress = badWr.address();
        grow(4);
    }

    /** The first encoded request. */
    MemorySegment head() {
        return wrs;
    }

    /** {@code head().address()}, what a post passes. */
    long headAddress() {
        return wrsAddress;
    }

    /**
     * Encodes the chain at {@code head}. A request with more SGEs than the queue's max_recv_sge ends the
     * chain: the ones before it are encoded (to be posted) and the refusal is returned, to be thrown after.
     *
     * @return null, or the EINVAL refusal of the first request refused
     * @throws PostException EINVAL when the first request is refused (nothing to post)
     */
    PostException encode(RecvWorkRequest head) {
        int n = 0;
        PostException refused = null;
        for (RecvWorkRequest w = head; w != null; w = w.next()) {
            if (n == capacity) {
                grow(capacity * 2);
            }
            int numSge = w.numSge();
            if (numSge > maxSge) {
                refused = new PostException(Errno.EINVAL, "receive request has " + numSge + " SGEs, max_recv_sge is "
                        + maxSge, w, n);
                break;
            }
            long base = n * RECV_WR_SIZE;
            long sgeBase = (long) n * maxSge * SGE_SIZE;
            wrs.set(LONG, base + RWR_WR_ID, w.wrId());
            wrs.set(LONG, base + RWR_NEXT, wrs.address() + base + RECV_WR_SIZE);
            wrs.set(LONG, base + RWR_SG_LIST, sges.address() + sgeBase);
            wrs.set(INT, base + RWR_NUM_SGE, numSge);
            for (int s = 0; s < numSge; s++) {
                long o = sgeBase + s * SGE_SIZE;
                sges.set(LONG, o + SGE_ADDR, w.sgeAddr(s));
                sges.set(INT, o + SGE_LENGTH, w.sgeLength(s));
                sges.set(INT, o + SGE_LKEY, w.sgeLkey(s));
            }
            n++;
        }
        if (n == 0) {
            throw refused;
        }
        wrs.set(LONG, (n - 1) * RECV_WR_SIZE + RWR_NEXT, 0L);
        badWr.set(LONG, 0, 0L);
        return refused;
    }

    /** The index in the chain of the request {@link #badWr} points at (0 if it points nowhere we know). */
    int badIndex() {
        long bad = badWr.get(LONG, 0);
        long off = bad - wrs.address();
        if (bad == 0 || off < 0 || off >= capacity * RECV_WR_SIZE) {
            return 0;
        }
        return (int) (off / RECV_WR_SIZE);
    }

    private void grow(int n) {
        Arena next = Arena.ofShared();
        MemorySegment w = next.allocate(n * RECV_WR_SIZE, 8);
        MemorySegment s = next.allocate((long) n * maxSge * SGE_SIZE, 8);
        if (wrs != null) {
            MemorySegment.copy(wrs, 0, w, 0, capacity * RECV_WR_SIZE);
            MemorySegment.copy(sges, 0, s, 0, (long) capacity * maxSge * SGE_SIZE);
            for (int i = 0; i < capacity; i++) {
                long base = i * RECV_WR_SIZE;
                w.set(LONG, base + RWR_NEXT, w.address() + base + RECV_WR_SIZE);
                w.set(LONG, base + RWR_SG_LIST, s.address() + (long) i * maxSge * SGE_SIZE);
            }
        }
        Arena old = arena;
        arena = next;
        wrs = w;
        wrsAddress = w.address();
        sges = s;
        capacity = n;
        if (old != null) {
            old.close();
        }
    }

    void close() {
        arena.close();
        badWrArena.close();
    }
}
