// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;

/**
 * The send queue of one {@link IwarpConnection}: a ring of preallocated slots in post order, so posting
 * allocates nothing. Three counters cut it: {@code head} (oldest not completed), {@code next} (next to
 * start) and {@code tail} (next free). A started slot is {@link #FILLED} once its last byte is in the
 * output (it completes when that byte is handed to TCP, as siw completes at transmit) or {@link #READ_OUT}
 * while its Read Request waits for the response; slots may complete out of order (a Send posted after a
 * Read completes first, as with siw), and {@code head} passes over {@link #DONE} ones. Guarded by the
 * connection's lock; the slot contents of {@code [next, tail)} are written by the poster before
 * {@code tail} moves.
 */
final class SendWorkQueue {
    static final byte QUEUED = 0;
    static final byte FILLING = 1;
    static final byte FILLED = 2;
    static final byte READ_OUT = 3;
    static final byte DONE = 4;
    /** The kind of a Read slot (the RDMAP opcode of its request). */
    static final int READ = Rdmap.RDMA_READ_REQUEST;

    final int capacity;
    final long[] wrId;
    final int[] opcode;
    final MemorySegment[][] slices;
    final int[] remoteStag;
    final long[] remoteOffset;
    final int[] localStag;
    final long[] localOffset;
    final long[] length;
    final long[] endPosition;
    final byte[] state;
    long head;
    long next;
    long tail;

    SendWorkQueue(int capacity) {
        this.capacity = capacity;
        wrId = new long[capacity];
        opcode = new int[capacity];
        slices = new MemorySegment[capacity][];
        remoteStag = new int[capacity];
        remoteOffset = new long[capacity];
        localStag = new int[capacity];
        localOffset = new long[capacity];
        length = new long[capacity];
        endPosition = new long[capacity];
        state = new byte[capacity];
    }

    int slot(long seq) {
        return (int) (seq % capacity);
    }

    boolean full() {
        return tail - head >= capacity;
    }

    /** Claims the slot at the tail; the caller fills it and calls {@link #publish()}. */
    int claim() {
        int i = slot(tail);
        state[i] = QUEUED;
        endPosition[i] = Long.MAX_VALUE;
        return i;
    }

    void publish() {
        tail++;
    }

    /** Moves {@code head} past completed slots. */
    void retire() {
        while (head < next && state[slot(head)] == DONE) {
            slices[slot(head)] = null;
            head++;
        }
    }
}
