// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.QpLayouts.SGE_ADDR;
import static org.rdma4j.nativeverbs.abi.QpLayouts.SGE_LENGTH;
import static org.rdma4j.nativeverbs.abi.QpLayouts.SGE_LKEY;
import static org.rdma4j.nativeverbs.abi.QpLayouts.SGE_SIZE;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.verbs.ScatterGatherList;

/**
 * The native memory a chain of work requests is posted from, what the send and the receive encoders
 * (its subclasses) share: an array of fixed-size work request structs ({@code struct ibv_send_wr} or
 * {@code struct ibv_recv_wr}), each linked to the next and pointing at its own room for
 * {@link #maxSge} entries of a {@code struct ibv_sge} array, and the {@code bad_wr} pointer a post
 * fills in. The arrays live as long as their queue; {@link #grow} replaces them with larger ones,
 * keeping what is encoded. Not thread safe: the queue serializes posts.
 */
abstract class WrChain {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    /** Room for this many SGEs per request (at least 1). */
    final int maxSge;
    private final long wrSize;
    private final long nextOffset;
    private final long sgListOffset;
    private Arena arena;
    private int capacity;
    private MemorySegment wrs;
    private long wrsAddress;
    private MemorySegment sges;
    /** {@code struct ibv_*_wr *bad_wr}: where the provider says which request it refused. */
    final MemorySegment badWr;
    /** {@code badWr.address()}, what a post passes. */
    final long badWrAddress;
    private final Arena badWrArena = Arena.ofShared();

    /**
     * @param wrSize the size of one work request struct
     * @param nextOffset where its {@code next} pointer is
     * @param sgListOffset where its {@code sg_list} pointer is
     * @param maxSge SGEs per request (0 counts as 1)
     * @param initial room for this many requests to start with
     */
    WrChain(long wrSize, long nextOffset, long sgListOffset, int maxSge, int initial) {
        this.wrSize = wrSize;
        this.nextOffset = nextOffset;
        this.sgListOffset = sgListOffset;
        this.maxSge = Math.max(1, maxSge);
        this.badWr = badWrArena.allocate(ValueLayout.ADDRESS);
        this.badWrAddress = badWr.address();
        grow(initial);
    }

    /** How many requests there is room for. */
    final int capacity() {
        return capacity;
    }

    /** The work request array. */
    final MemorySegment wrs() {
        return wrs;
    }

    /** The SGE array. */
    final MemorySegment sges() {
        return sges;
    }

    /** The first encoded request (the start of {@link #wrs()}). */
    final MemorySegment head() {
        return wrs;
    }

    /** {@code head().address()}, what a post passes. */
    final long headAddress() {
        return wrsAddress;
    }

    /** Where request {@code i} is in {@link #wrs()}. */
    final long wrBase(int i) {
        return i * wrSize;
    }

    /** Where request {@code i}'s SGEs are in {@link #sges()}. */
    final long sgeBase(int i) {
        return (long) i * maxSge * SGE_SIZE;
    }

    /**
     * Links request {@code i} to the slot after it and to its SGEs ({@code next} and {@code sg_list});
     * returns where it is in {@link #wrs()}.
     */
    final long link(int i) {
        long base = wrBase(i);
        wrs.set(LONG, base + nextOffset, wrs.address() + base + wrSize);
        wrs.set(LONG, base + sgListOffset, sges.address() + sgeBase(i));
        return base;
    }

    /** Writes the first {@code numSge} SGEs of {@code l} as request {@code i}'s SGEs. */
    final void putSges(int i, ScatterGatherList l, int numSge) {
        long sgeBase = sgeBase(i);
        for (int s = 0; s < numSge; s++) {
            long o = sgeBase + s * SGE_SIZE;
            sges.set(LONG, o + SGE_ADDR, l.sgeAddr(s));
            sges.set(INT, o + SGE_LENGTH, l.sgeLength(s));
            sges.set(INT, o + SGE_LKEY, l.sgeLkey(s));
        }
    }

    /** Ends the chain after its first {@code n} requests and clears {@link #badWr} for the post. */
    final void end(int n) {
        wrs.set(LONG, wrBase(n - 1) + nextOffset, 0L);
        badWr.set(LONG, 0, 0L);
    }

    /** The index in the chain of the request {@link #badWr} points at (0 if it points nowhere we know). */
    final int badIndex() {
        long bad = badWr.get(LONG, 0);
        long off = bad - wrs.address();
        if (bad == 0 || off < 0 || off >= capacity * wrSize) {
            return 0;
        }
        return (int) (off / wrSize);
    }

    /**
     * Room for {@code n} requests: new native arrays with the old ones' contents, every request's links
     * re-pointed into them (a chain being encoded keeps its first requests); the old arrays are freed.
     */
    final void grow(int n) {
        Arena next = Arena.ofShared();
        MemorySegment w = next.allocate(n * wrSize, 8);
        MemorySegment s = next.allocate((long) n * maxSge * SGE_SIZE, 8);
        if (wrs != null) {
            MemorySegment.copy(wrs, 0, w, 0, capacity * wrSize);
            MemorySegment.copy(sges, 0, s, 0, (long) capacity * maxSge * SGE_SIZE);
            for (int i = 0; i < capacity; i++) {
                long base = wrBase(i);
                w.set(LONG, base + nextOffset, w.address() + base + wrSize);
                w.set(LONG, base + sgListOffset, s.address() + sgeBase(i));
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

    /** Frees the native arrays; the chain cannot be used afterwards. */
    void close() {
        arena.close();
        badWrArena.close();
    }
}
