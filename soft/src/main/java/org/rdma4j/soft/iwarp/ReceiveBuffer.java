// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;

/**
 * The scatter list of the receive work request a Send is placed into: memory slices the device has
 * already checked (each lkey valid, LOCAL_WRITE, inside its region), in order. The receiver owns one
 * instance and hands it to {@link RdmapReceiver.Host#nextReceive} for each new Send; the device fills it
 * and keeps the array alive until the Send completes. Allocation-free. Not thread safe.
 */
public final class ReceiveBuffer {
    private MemorySegment[] slices = new MemorySegment[0];
    private int count;
    private long totalBytes;
    private long id;

    /** Creates an empty buffer. */
    public ReceiveBuffer() {
    }

    /**
     * Sets the scatter list.
     *
     * @param id     the caller's name for the receive (its work request id), handed back on completion
     * @param slices the slices, in order; zero-length ones are skipped
     * @param count  how many of {@code slices} are used
     */
    public void set(long id, MemorySegment[] slices, int count) {
        long total = 0;
        for (int i = 0; i < count; i++) {
            total += slices[i].byteSize();
        }
        this.id = id;
        this.slices = slices;
        this.count = count;
        this.totalBytes = total;
    }

    /** {@return the caller's name for the receive} */
    public long id() {
        return id;
    }

    /** {@return the number of slices} */
    public int count() {
        return count;
    }

    /**
     * {@return one slice}
     *
     * @param i its index, below {@link #count()}
     */
    public MemorySegment slice(int i) {
        return slices[i];
    }

    /** {@return the bytes the slices hold together} */
    public long totalBytes() {
        return totalBytes;
    }
}
