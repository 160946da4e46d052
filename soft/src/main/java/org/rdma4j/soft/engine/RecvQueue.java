// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.RecvWorkRequest;

/**
 * A receive queue: a QP's own or a shared receive queue (SRQ). Posting copies the request into a
 * preallocated slot; the responder takes the oldest. The SRQ limit fires its listener once when the
 * number of posted receives drops below it, then disarms. Thread safe.
 */
public final class RecvQueue {
    /** Called (outside the lock) when an armed SRQ limit is reached. */
    public interface LimitListener {
        void limitReached();
    }

    /** A receive's scatter list must add up to less than this (2^31 bytes). */
    static final long MAX_MESSAGE = 1L << 31;

    private RecvWqe[] ring;
    private int maxWr;
    private final int maxSge;
    private long head;
    private long tail;
    private int limit;
    private final LimitListener limitListener;
    /** Receives in flight: taken by a responder but not yet completed (a partially received SEND). */
    private final boolean shared;

    public RecvQueue(int maxWr, int maxSge, boolean shared, LimitListener limitListener) {
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        this.shared = shared;
        this.limitListener = limitListener;
        ring = new RecvWqe[Math.max(1, maxWr)];
        for (int i = 0; i < ring.length; i++) {
            ring[i] = new RecvWqe(maxSge);
        }
    }

    /** The slot of position {@code index}: a mask for the usual power-of-two depths, else a division. */
    private RecvWqe slot(long index) {
        RecvWqe[] r = ring;
        int n = r.length;
        return r[(n & (n - 1)) == 0 ? (int) index & (n - 1) : (int) (index % n)];
    }

    public boolean isShared() {
        return shared;
    }

    public synchronized int maxWr() {
        return maxWr;
    }

    public int maxSge() {
        return maxSge;
    }

    public synchronized int count() {
        return (int) (head - tail);
    }

    public synchronized int limit() {
        return limit;
    }

    public synchronized void setLimit(int l) {
        limit = l;
    }

    /** Posts a chain; throws {@link PostException} (ENOMEM full, EINVAL too many SGEs or 2^31 bytes or more). */
    public synchronized void post(RecvWorkRequest wr) {
        int index = 0;
        for (RecvWorkRequest w = wr; w != null; w = w.next(), index++) {
            if (w.numSge() > maxSge) {
                throw new PostException(Errno.EINVAL, "receive has " + w.numSge() + " SGEs, max_recv_sge is "
                        + maxSge, w, index);
            }
            long sum = w.totalLength();
            if (sum >= MAX_MESSAGE) {
                // rxe post_one_recv: IBA's largest message is 2^31 bytes
                throw new PostException(Errno.EINVAL, "receive of " + sum + " bytes, the most is 2^31 - 1", w, index);
            }
            if (head - tail >= maxWr) {
                throw new PostException(Errno.ENOMEM, "receive queue full (" + maxWr + " WRs)", w, index);
            }
            RecvWqe q = slot(head);
            q.wrId = w.wrId();
            q.numSge = w.numSge();
            long total = 0;
            for (int i = 0; i < q.numSge; i++) {
                q.addr[i] = w.sgeAddr(i);
                q.length[i] = w.sgeLength(i);
                q.lkey[i] = w.sgeLkey(i);
                total += Integer.toUnsignedLong(q.length[i]);
            }
            q.totalLength = total;
            head++;
        }
    }

    /**
     * Takes the oldest receive and copies it into {@code into} (the QP's in-flight receive), or
     * returns false when empty.
     */
    public boolean take(RecvWqe into) {
        boolean fire = false;
        synchronized (this) {
            if (head == tail) {
                return false;
            }
            RecvWqe q = slot(tail);
            into.wrId = q.wrId;
            into.numSge = q.numSge;
            into.totalLength = q.totalLength;
            System.arraycopy(q.addr, 0, into.addr, 0, q.numSge);
            System.arraycopy(q.length, 0, into.length, 0, q.numSge);
            System.arraycopy(q.lkey, 0, into.lkey, 0, q.numSge);
            tail++;
            if (limit > 0 && head - tail < limit) {
                limit = 0;
                fire = true;
            }
        }
        if (fire && limitListener != null) {
            limitListener.limitReached();
        }
        return true;
    }

    /** The total length of the oldest posted receive, or -1 when none is posted. */
    public synchronized long headTotalLength() {
        return head == tail ? -1 : slot(tail).totalLength;
    }

    /** Removes every posted receive, handing each to {@code sink} (flush). */
    public void drain(java.util.function.Consumer<RecvWqe> sink) {
        RecvWqe tmp = new RecvWqe(maxSge);
        while (take(tmp)) {
            sink.accept(tmp);
        }
    }

    /** Resizes to {@code newMax} WRs; false if fewer than posted. */
    public synchronized boolean resize(int newMax) {
        int queued = (int) (head - tail);
        if (newMax < queued) {
            return false;
        }
        RecvWqe[] n = new RecvWqe[Math.max(1, newMax)];
        for (int i = 0; i < queued; i++) {
            n[i] = slot(tail + i);
        }
        for (int i = queued; i < n.length; i++) {
            n[i] = new RecvWqe(maxSge);
        }
        ring = n;
        tail = 0;
        head = queued;
        maxWr = newMax;
        return true;
    }
}
