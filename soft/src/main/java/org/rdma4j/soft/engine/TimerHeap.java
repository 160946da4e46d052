// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.util.Arrays;

/**
 * The QPs with a timer armed, ordered by deadline (a binary min-heap; each QP is in it at most once and
 * knows its place, {@link QpEngine#timerSlot}): the progress agent looks only at the QPs whose deadline
 * is due, so idle QPs cost nothing. A QP stays queued under the earliest deadline it asked for; when
 * that comes the agent reads the QP's real deadline and queues it again if it moved later, so pushing an
 * ACK timer back (every packet sent) never touches the heap. Not thread safe: the device guards it.
 */
final class TimerHeap {
    private QpEngine[] heap = new QpEngine[16];
    private int size;

    int size() {
        return size;
    }

    /** Queues {@code qp} under {@code deadlineNs}, or moves it earlier if it is queued under a later one. */
    void schedule(QpEngine qp, long deadlineNs) {
        int at = qp.timerSlot;
        if (at >= 0) {
            if (deadlineNs < qp.timerQueuedNs) {
                qp.timerQueuedNs = deadlineNs;
                siftUp(at, qp);
            }
            return;
        }
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        qp.timerQueuedNs = deadlineNs;
        siftUp(size++, qp);
    }

    /** The earliest queued deadline, or Long.MAX_VALUE. */
    long nextDeadlineNs() {
        return size == 0 ? Long.MAX_VALUE : heap[0].timerQueuedNs;
    }

    /** Takes out and returns the QP with the earliest deadline if that is at or before {@code nowNs}. */
    QpEngine pollDue(long nowNs) {
        if (size == 0 || heap[0].timerQueuedNs > nowNs) {
            return null;
        }
        QpEngine top = heap[0];
        removeAt(0);
        return top;
    }

    /** Takes {@code qp} out (destroyed); nothing if it is not queued. */
    void remove(QpEngine qp) {
        if (qp.timerSlot >= 0) {
            removeAt(qp.timerSlot);
        }
    }

    private void removeAt(int at) {
        QpEngine gone = heap[at];
        gone.timerSlot = -1;
        gone.timerQueuedNs = Long.MAX_VALUE;
        QpEngine last = heap[--size];
        heap[size] = null;
        if (at < size) {
            siftDown(at, last);
            if (heap[at] == last) {
                siftUp(at, last);
            }
        }
        if (heap.length > 64 && size < heap.length / 4) {
            heap = Arrays.copyOf(heap, heap.length / 2);
        }
    }

    private void siftUp(int at, QpEngine qp) {
        long d = qp.timerQueuedNs;
        while (at > 0) {
            int parent = (at - 1) >>> 1;
            QpEngine p = heap[parent];
            if (p.timerQueuedNs <= d) {
                break;
            }
            heap[at] = p;
            p.timerSlot = at;
            at = parent;
        }
        heap[at] = qp;
        qp.timerSlot = at;
    }

    private void siftDown(int at, QpEngine qp) {
        long d = qp.timerQueuedNs;
        int half = size >>> 1;
        while (at < half) {
            int child = 2 * at + 1;
            int right = child + 1;
            if (right < size && heap[right].timerQueuedNs < heap[child].timerQueuedNs) {
                child = right;
            }
            QpEngine c = heap[child];
            if (d <= c.timerQueuedNs) {
                break;
            }
            heap[at] = c;
            c.timerSlot = at;
            at = child;
        }
        heap[at] = qp;
        qp.timerSlot = at;
    }
}
