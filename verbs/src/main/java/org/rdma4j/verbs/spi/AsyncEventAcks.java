// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * A context's count of asynchronous events reported and not yet acknowledged, per QP, CQ and SRQ
 * (libibverbs' {@code events_completed} against the kernel's {@code events_reported}), so that every
 * provider refuses the same things (S-LIFE-6): closing an object with an unacknowledged event is
 * EBUSY (where {@code ibv_destroy_*} would wait), and acknowledging an event that is not outstanding
 * (never returned, or acknowledged already) is EINVAL. Port and device events name no object and are
 * not counted; acknowledging one does nothing. Thread safe.
 */
public final class AsyncEventAcks {
    /** Object (a CQ, QP or SRQ) to its events reported and not yet acknowledged; absent = none. */
    private final Map<Object, AtomicInteger> outstanding = new ConcurrentHashMap<>();

    /** No event outstanding. */
    public AsyncEventAcks() {}

    /**
     * The object an event is about, or null for a port or device event.
     *
     * @param e the event
     * @return its QP, CQ or SRQ, else null
     */
    public static Object element(AsyncEvent e) {
        return e.qp() != null ? e.qp() : e.cq() != null ? e.cq() : e.srq();
    }

    /**
     * Counts {@code e} as handed to the application (call as {@code getAsyncEvent} returns it).
     *
     * @param e the event returned
     */
    public void reported(AsyncEvent e) {
        Object o = element(e);
        if (o != null) {
            outstanding.computeIfAbsent(o, k -> new AtomicInteger()).incrementAndGet();
        }
    }

    /**
     * Takes one acknowledgement of {@code e} off its object's count.
     *
     * @param e the event, as {@code getAsyncEvent} returned it
     * @return true for an event about a QP, CQ or SRQ (counted down), false for a port or device event
     * @throws VerbsException EINVAL when no event of that object is outstanding
     */
    public boolean acknowledge(AsyncEvent e) {
        Object o = element(e);
        if (o == null) {
            return false;
        }
        AtomicInteger n = outstanding.get(o);
        while (n != null) {
            int v = n.get();
            if (v == 0) {
                break;
            }
            if (n.compareAndSet(v, v - 1)) {
                return true;
            }
        }
        throw new VerbsException(Errno.EINVAL, "acknowledging " + e.type() + " of " + o
                + ": no event of it is outstanding (never returned by getAsyncEvent, or acknowledged already)");
    }

    /**
     * The events of {@code o} returned and not yet acknowledged.
     *
     * @param o a CQ, QP or SRQ
     * @return the count, 0 when none
     */
    public int outstanding(Object o) {
        AtomicInteger n = outstanding.get(o);
        return n == null ? 0 : n.get();
    }

    /**
     * Forgets {@code o} (it is destroyed): a later acknowledgement of its events is EINVAL.
     *
     * @param o a CQ, QP or SRQ
     */
    public void forget(Object o) {
        outstanding.remove(o);
    }

    /** Forgets every count (the context is closed). */
    public void clear() {
        outstanding.clear();
    }
}
