// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A receive work request ({@code struct ibv_recv_wr}). Reusable: set it up once and post it again and
 * again; the provider copies what it needs at post time. Chain several with {@link #next}. Not thread
 * safe.
 * {@snippet :
 * RecvWorkRequest rwr = new RecvWorkRequest().wrId(7).sge(mr, 0, 4096);
 * qp.postRecv(rwr);
 * }
 */
public final class RecvWorkRequest extends ScatterGatherList {
    private long wrId;
    private RecvWorkRequest next;

    /** An empty receive request with room for 4 scatter entries (more grow the arrays once). */
    public RecvWorkRequest() {
        super(4);
    }

    /** {@return {@code wr_id}: the caller's value, given back in the receive's work completion} */
    public long wrId() {
        return wrId;
    }

    /**
     * Sets {@link #wrId()}.
     *
     * @param id any value; rdma4j does not look at it
     * @return this request
     */
    public RecvWorkRequest wrId(long id) {
        wrId = id;
        return this;
    }

    /** {@return {@code next}: the next request of the chain, or null for the last} */
    public RecvWorkRequest next() {
        return next;
    }

    /**
     * Chains {@code n} after this request: one post submits the chain in order.
     *
     * @param n the next request, or null to end the chain here
     * @return this request
     */
    public RecvWorkRequest next(RecvWorkRequest n) {
        next = n;
        return this;
    }

    /**
     * Clears the scatter list (keeps wrId and next).
     *
     * @return this request
     */
    public RecvWorkRequest clear() {
        clearSges();
        return this;
    }

    /**
     * Appends a scatter entry ({@code struct ibv_sge}) covering {@code length} bytes at {@code offset}
     * into {@code mr}, which needs LOCAL_WRITE. A message longer than the list completes LOC_LEN_ERR
     * (S-ERR-4); on a UD QP the first 40 bytes receive the GRH (S-UD-1).
     *
     * @param mr     the region (its address and lkey are read now)
     * @param offset the offset into the region in bytes
     * @param length the length in bytes (unsigned 32-bit)
     * @return this request
     */
    public RecvWorkRequest sge(MemoryRegion mr, long offset, int length) {
        appendSge(mr.address() + offset, length, mr.lkey());
        return this;
    }

    /**
     * Appends a raw scatter entry ({@code struct ibv_sge}).
     *
     * @param addr   the virtual address of the first byte
     * @param length the length in bytes (unsigned 32-bit)
     * @param lkey   the lkey of a region holding the range
     * @return this request
     */
    public RecvWorkRequest sge(long addr, int length, int lkey) {
        appendSge(addr, length, lkey);
        return this;
    }

    /**
     * Replaces scatter entry {@code i}, e.g. to point a reused request at the next buffer.
     *
     * @param i      the entry, below {@link #numSge()}
     * @param addr   the virtual address of the first byte
     * @param length the length in bytes
     * @param lkey   the lkey of a region holding the range
     * @return this request
     * @throws IndexOutOfBoundsException if there is no entry {@code i}
     */
    public RecvWorkRequest setSge(int i, long addr, int length, int lkey) {
        replaceSge(i, addr, length, lkey);
        return this;
    }
}
