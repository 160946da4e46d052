// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A reusable scatter/gather list ({@code struct ibv_sge[]}, with {@code num_sge}): address, length and
 * lkey per entry, stored in parallel primitive arrays so posting allocates nothing. The base of
 * {@link SendWorkRequest} (gather: where the bytes sent come from) and {@link RecvWorkRequest}
 * (scatter: where the bytes received go). Entries are not checked when added: the device checks them
 * against the lkey's region when the request executes. Not thread safe.
 */
public class ScatterGatherList {
    private long[] addr;
    private int[] length;
    private int[] lkey;
    private int numSge;

    /**
     * An empty list with room for {@code capacity} entries.
     *
     * @param capacity the initial array size; more entries grow the arrays (which allocates)
     */
    protected ScatterGatherList(int capacity) {
        addr = new long[capacity];
        length = new int[capacity];
        lkey = new int[capacity];
    }

    /**
     * {@code num_sge}: the number of entries in use; at most the QP's {@code max_send_sge} or
     * {@code max_recv_sge} at post time (else EINVAL).
     *
     * @return the number of entries
     */
    public final int numSge() {
        return numSge;
    }

    /**
     * {@code sg_list[i].addr}.
     *
     * @param i the entry, below {@link #numSge()} (not checked against it)
     * @return the virtual address of entry {@code i}
     */
    public final long sgeAddr(int i) {
        return addr[i];
    }

    /**
     * {@code sg_list[i].length}.
     *
     * @param i the entry, below {@link #numSge()} (not checked against it)
     * @return the length in bytes of entry {@code i}, an unsigned 32-bit value
     */
    public final int sgeLength(int i) {
        return length[i];
    }

    /**
     * {@code sg_list[i].lkey}.
     *
     * @param i the entry, below {@link #numSge()} (not checked against it)
     * @return the lkey of entry {@code i}
     */
    public final int sgeLkey(int i) {
        return lkey[i];
    }

    /** {@return the sum of the entry lengths in bytes, each read as unsigned} */
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

    /**
     * Appends a raw entry (grows the arrays if needed, which allocates: size them up front).
     *
     * @param address the virtual address
     * @param len     the length in bytes
     * @param key     the lkey
     */
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

    /**
     * Replaces entry {@code i}.
     *
     * @param i       the entry, below {@link #numSge()}
     * @param address the virtual address
     * @param len     the length in bytes
     * @param key     the lkey
     * @throws IndexOutOfBoundsException if there is no entry {@code i}
     */
    protected final void replaceSge(int i, long address, int len, int key) {
        if (i >= numSge) {
            throw new IndexOutOfBoundsException(i);
        }
        addr[i] = address;
        length[i] = len;
        lkey[i] = key;
    }
}
