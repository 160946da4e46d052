// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;

/**
 * The receive queue of one {@link IwarpConnection}: a ring of preallocated slots in post order. Receives
 * complete in order: {@code head} is the oldest not completed, {@code taken} the next to hand to a Send
 * (at most one is taken and not completed), {@code tail} the next free. Guarded by the connection's lock.
 */
final class RecvWorkQueue {
    final int capacity;
    final long[] wrId;
    final MemorySegment[][] slices;
    long head;
    long taken;
    long tail;

    RecvWorkQueue(int capacity) {
        this.capacity = capacity;
        wrId = new long[capacity];
        slices = new MemorySegment[capacity][];
    }

    int slot(long seq) {
        return (int) (seq % capacity);
    }

    boolean full() {
        return tail - head >= capacity;
    }

    /** {@return whether a receive is handed to a Send and not completed} */
    boolean inProgress() {
        return taken > head;
    }
}
