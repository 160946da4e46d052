// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.verbs.NetworkHeaderType;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * A completion queue's ring of preallocated completion slots plus its notification state. Producers
 * (QP engines) push under the ring's lock; the consumer polls under the same lock, except that it sees
 * an empty ring without it. Overflow is sticky: the ring stops accepting entries and the listener
 * raises IBV_EVENT_CQ_ERR. Thread safe.
 */
public final class CqRing {
    /** Receives the CQ's event notifications; called outside the ring lock. */
    public interface Listener {
        /** An armed CQ got a completion matching its arming: one event on the channel. */
        void completionEvent();

        /** The CQ overflowed. */
        void overflow();
    }

    private static final int ARM_NONE = 0;
    private static final int ARM_NEXT = 1;
    private static final int ARM_SOLICITED = 2;

    private final Listener listener;
    private WorkCompletion[] slots;
    /** slots.length - 1 when that is a power of two, else -1 (then a division). */
    private int mask;
    /** Entries ever pushed / polled; volatile so a poll of an empty ring needs no lock. */
    private volatile long head;
    private volatile long tail;
    private int armed;
    private boolean overflowed;

    public CqRing(int capacity, Listener listener) {
        this.listener = listener;
        slots = WorkCompletion.array(capacity);
        mask = maskFor(capacity);
    }

    private static int maskFor(int length) {
        return Integer.bitCount(length) == 1 ? length - 1 : -1;
    }

    private WorkCompletion slot(long index) {
        int m = mask;
        return slots[m >= 0 ? (int) index & m : (int) (index % slots.length)];
    }

    public synchronized int capacity() {
        return slots.length;
    }

    public synchronized int count() {
        return (int) (head - tail);
    }

    public synchronized boolean isOverflowed() {
        return overflowed;
    }

    /**
     * Adds a completion. Returns false on overflow (the entry is lost and the CQ is in error).
     * {@code solicited} marks a receive completion of a message with the SE bit.
     */
    public boolean push(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int qpNum, int wcFlags,
                        int immData, int invRkey, int srcQp, boolean solicited) {
        return push(wrId, status, opcode, byteLen, qpNum, wcFlags, immData, invRkey, srcQp, solicited,
                NetworkHeaderType.IB);
    }

    /** As above, for a UD receive whose GRH area holds a {@code headerType} header. */
    public boolean push(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int qpNum, int wcFlags,
                        int immData, int invRkey, int srcQp, boolean solicited, NetworkHeaderType headerType) {
        boolean event;
        synchronized (this) {
            if (overflowed) {
                return false;
            }
            if (head - tail == slots.length) {
                overflowed = true;
            } else {
                WorkCompletion wc = slot(head);
                wc.set(wrId, status, opcode, byteLen, qpNum, wcFlags, immData, invRkey, srcQp, 0);
                wc.networkHdrType(headerType);
                head = head + 1;
            }
            event = armed == ARM_NEXT || (armed == ARM_SOLICITED && (solicited || status != WcStatus.SUCCESS));
            if (event) {
                armed = ARM_NONE;
            }
            if (overflowed) {
                event = false;
            }
        }
        if (overflowed) {
            listener.overflow();
            return false;
        }
        if (event) {
            listener.completionEvent();
        }
        return true;
    }

    /** Moves up to {@code max} completions into {@code out}; returns how many. */
    public int poll(WorkCompletion[] out, int max) {
        if (tail == head) {
            return 0; // empty: no lock, so a spinning poller leaves the producers' lock alone
        }
        synchronized (this) {
            int n = 0;
            int limit = Math.min(max, out.length);
            long t = tail;
            long h = head;
            while (n < limit && t < h) {
                out[n++].copyFrom(slot(t));
                t++;
            }
            tail = t;
            return n;
        }
    }

    /** Arms the ring for one event. */
    public synchronized void arm(boolean solicitedOnly) {
        // Arming for "next" must not be weakened by a later solicited-only request.
        if (armed != ARM_NEXT) {
            armed = solicitedOnly ? ARM_SOLICITED : ARM_NEXT;
        }
    }

    /** Resizes to {@code capacity} slots; false when fewer than the queued entries. */
    public synchronized boolean resize(int capacity) {
        int queued = (int) (head - tail);
        if (capacity < queued) {
            return false;
        }
        WorkCompletion[] n = WorkCompletion.array(capacity);
        for (int i = 0; i < queued; i++) {
            n[i].copyFrom(slot(tail + i));
        }
        slots = n;
        mask = maskFor(capacity);
        tail = 0;
        head = queued;
        return true;
    }
}
