// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A reusable scatter/gather list ({@code struct ibv_sge[]}): address, length and lkey per entry,
 * stored in parallel primitive arrays so posting allocates nothing. Not thread safe.
 */
public class ScatterGatherList {
    private long[] addr;
    private int[] length;
    private int[] lkey;
    private int numSge;

    protected ScatterGatherList(int capacity) {
        addr = new long[capacity];
        length = new int[capacity];
        lkey = new int[capacity];
    }

    /** Number of entries in use. */
    public final int numSge() {
        return numSge;
    }

    public final long sgeAddr(int i) {
        return addr[i];
    }

    public final int sgeLength(int i) {
        return length[i];
    }

    public final int sgeLkey(int i) {
        return lkey[i];
    }

    /** Sum of the entry lengths, as an unsigned value. */
    public final long totalLength() {
        long t = 0;
        for (int i = 0; i < numSge; i++) {
            t += Integer.toUnsignedLong(length[i]);
        }
        return t;
    }

    /** Removes every entry. */
    protected final void clearSges() {
        numSge = 0;
    }

    /** Appends a raw entry (grows the arrays if needed, which allocates: size them up front). */
    protected final void appendSge(long address, int len, int key) {
        if (numSge == addr.length) {
            int n = Math.max(4, addr.length * 2);
            addr = java.util.Arrays.copyOf(addr, n);
            length = java.util.Arrays.copyOf(length, n);
            lkey = java.util.Arrays.copyOf(lkey, n);
        }
        addr[numSge] = address;
        length[numSge] = len;
        lkey[numSge] = key;
        numSge++;
    }

    /** Replaces entry {@code i}. */
    protected final void replaceSge(int i, long address, int len, int key) {
        if (i >= numSge) {
            throw new IndexOutOfBoundsException(i);
        }
        addr[i] = address;
        length[i] = len;
        lkey[i] = key;
    }
}
