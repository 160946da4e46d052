package org.rdma4j.soft.engine;

import org.rdma4j.verbs.NetworkHeaderType;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * A completion queue's ring of preallocated completion slots plus its notification state. Producers
 * (QP engines) push under the ring's lock; the consumer polls under the same lock. Overflow is
 * sticky: the ring stops accepting entries and the listener raises IBV_EVENT_CQ_ERR. Thread safe.
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
    private long head;
    private long tail;
    private int armed;
    private boolean overflowed;

    public CqRing(int capacity, Listener listener) {
        this.listener = listener;
        slots = WorkCompletion.array(capacity);
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
                slots[(int) (head % slots.length)].set(wrId, status, opcode, byteLen, qpNum, wcFlags, immData,
                        invRkey, srcQp, 0);
                slots[(int) (head % slots.length)].networkHdrType(headerType);
                head++;
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
    public synchronized int poll(WorkCompletion[] out, int max) {
        int n = 0;
        int limit = Math.min(max, out.length);
        while (n < limit && tail < head) {
            out[n++].copyFrom(slots[(int) (tail % slots.length)]);
            tail++;
        }
        return n;
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
            n[i].copyFrom(slots[(int) ((tail + i) % slots.length)]);
        }
        slots = n;
        tail = 0;
        head = queued;
        return true;
    }
}
