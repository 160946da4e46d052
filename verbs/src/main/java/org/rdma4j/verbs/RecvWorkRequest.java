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

    public RecvWorkRequest() {
        super(4);
    }

    public long wrId() {
        return wrId;
    }

    public RecvWorkRequest wrId(long id) {
        wrId = id;
        return this;
    }

    public RecvWorkRequest next() {
        return next;
    }

    public RecvWorkRequest next(RecvWorkRequest n) {
        next = n;
        return this;
    }

    /** Clears the scatter list (keeps wrId and next). */
    public RecvWorkRequest clear() {
        clearSges();
        return this;
    }

    /** Appends a scatter entry covering {@code length} bytes at {@code offset} into {@code mr}. */
    public RecvWorkRequest sge(MemoryRegion mr, long offset, int length) {
        appendSge(mr.address() + offset, length, mr.lkey());
        return this;
    }

    /** Appends a raw scatter entry. */
    public RecvWorkRequest sge(long addr, int length, int lkey) {
        appendSge(addr, length, lkey);
        return this;
    }

    /** Replaces scatter entry {@code i}. */
    public RecvWorkRequest setSge(int i, long addr, int length, int lkey) {
        replaceSge(i, addr, length, lkey);
        return this;
    }
}
