// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WrOpcode;
import org.rdma4j.verbs.spi.SendWrRules;

/**
 * A QP's send queue and its only owner: the ring of {@link SendWqe}s and the three positions in it.
 *
 * <pre>
 *   tail            cursor                head
 *    |  started: sent, |  posted, not yet   |  free slots
 *    |  awaiting ACK   |  started           |
 * </pre>
 *
 * Slots {@code [tail, head)} are posted; the requester starts them in order at the cursor and may
 * move the cursor back to resend (a rewind); the completer retires them in order at the tail.
 * Posting runs on any thread, one poster at a time, and publishes a slot by advancing the head; every
 * other method runs inside the QP task.
 *
 * <p>Memory ordering (docs/decisions/0035-send-queue-ordering-and-the-post-lock.md): the
 * head and the tail are written with release stores, not volatile ones, and the post lock is a CAS to
 * take and a release store to give back. A release store orders the slot's contents before the new
 * head (and a retired slot's reuse after the new tail); the StoreLoad order a volatile store would add
 * is not needed: a poster's head is seen by the task through {@code Task.run}'s CAS, which follows it,
 * and a retirement's tail through the completion queue's own release store after it, or the task's
 * release CAS.
 */
final class SendQueue {
    private final QpEngine qp;
    private final SendWqe[] ring;
    /** ring.length - 1 when that is a power of two (the usual depths), else -1: then a division. */
    private final int mask;
    /** 1 while a poster holds the post lock: taken by CAS, given back by a release store. */
    private volatile int postLock;
    private volatile long head;
    private volatile long tail;
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle POST_LOCK;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(SendQueue.class, "head", long.class);
            TAIL = l.findVarHandle(SendQueue.class, "tail", long.class);
            POST_LOCK = l.findVarHandle(SendQueue.class, "postLock", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private long cursor;

    SendQueue(QpEngine qp) {
        this.qp = qp;
        int n = qp.maxSendWr;
        MemorySegment inlineSlab = qp.maxInline > 0 ? Arena.ofAuto().allocate((long) qp.maxInline * n, 8) : null;
        ring = new SendWqe[n];
        mask = Integer.bitCount(n) == 1 ? n - 1 : -1;
        for (int i = 0; i < n; i++) {
            ring[i] = new SendWqe(qp.maxSendSge,
                    inlineSlab == null ? null : inlineSlab.asSlice((long) i * qp.maxInline, qp.maxInline));
        }
    }

    // ------------------------------------------------------------------ positions

    SendWqe at(long index) {
        int m = mask;
        return ring[m >= 0 ? (int) index & m : (int) (index % ring.length)];
    }

    long head() {
        return head;
    }

    long tail() {
        return tail;
    }

    long cursor() {
        return cursor;
    }

    /** Posted work requests not yet retired. */
    boolean isEmpty() {
        return tail == head;
    }

    /** A posted work request waits at the cursor (not started, or rewound). */
    boolean hasAtCursor() {
        return cursor < head;
    }

    SendWqe atCursor() {
        return at(cursor);
    }

    void advanceCursor() {
        cursor++;
    }

    /** Nothing before the cursor waits to be retired. */
    boolean allRetiredUpToCursor() {
        return tail == cursor;
    }

    /** The oldest started work request not retired yet, or null. */
    SendWqe oldestStarted() {
        return tail < cursor ? at(tail) : null;
    }

    /** Frees the oldest slot (its completion, if any, is the completer's to write). */
    void retireOldest() {
        TAIL.setRelease(this, tail + 1);
    }

    /** Drops every posted work request without a completion (modify to RESET). */
    void reset() {
        tail = head;
        cursor = head;
    }

    /** After a flush: nothing is left to start. */
    void skipToHead() {
        cursor = head;
    }

    // ------------------------------------------------------------------ what is outstanding

    /** The scan bound for outstanding work: up to and including the cursor's WQE, if posted. */
    private long scanEnd() {
        return Math.min(cursor + 1, head);
    }

    /** A started work request is not finished. */
    boolean hasOutstanding() {
        for (long i = tail, end = scanEnd(); i < end; i++) {
            SendWqe w = at(i);
            if (w.started && !w.done) {
                return true;
            }
        }
        return false;
    }

    /** The oldest started, unfinished request that went on the wire, or null. */
    SendWqe oldestPending() {
        for (long i = tail, end = scanEnd(); i < end; i++) {
            SendWqe w = at(i);
            if (w.started && !w.done && !w.opcode.isLocal()) {
                return w;
            }
        }
        return null;
    }

    /** The index of the unfinished request whose PSNs include {@code psn}, or -1. */
    long indexContaining(int psn) {
        for (long i = tail, end = scanEnd(); i < end; i++) {
            SendWqe w = at(i);
            if (!w.started) {
                break;
            }
            if (!w.done && !w.opcode.isLocal() && w.containsPsn(psn)) {
                return i;
            }
        }
        return -1;
    }

    SendWqe containing(int psn) {
        long i = indexContaining(psn);
        return i < 0 ? null : at(i);
    }

    /** The oldest unfinished READ or atomic, if every request before it has started; else null. */
    SendWqe oldestReadOrAtomic() {
        for (long i = tail, end = scanEnd(); i < end; i++) {
            SendWqe w = at(i);
            if (!w.started) {
                return null;
            }
            if (!w.done && w.isReadOrAtomic()) {
                return w;
            }
        }
        return null;
    }

    /**
     * Moves the cursor back to {@code index} (a rewind): the unfinished requests after it, up to the
     * old cursor, start over.
     */
    void rewindCursorTo(long index) {
        for (long j = index + 1; j <= cursor && j < head; j++) {
            SendWqe later = at(j);
            if (!later.done) {
                later.started = false;
                later.sent = false;
            }
        }
        cursor = index;
    }

    // ------------------------------------------------------------------ posting

    /**
     * {@code ibv_post_send}: validates and copies each work request of the chain into the slot at the
     * head and publishes it. Throws {@link PostException} at the first one refused; the ones before
     * it stay posted.
     */
    void post(SendWorkRequest first) {
        int index = 0;
        lockPost();
        try {
            for (SendWorkRequest w = first; w != null; w = w.next(), index++) {
                QpState s = qp.state;
                if (s == QpState.RESET || s == QpState.INIT || s == QpState.RTR) {
                    throw new PostException(Errno.EINVAL, "post_send on a QP in state " + s
                            + " (needs RTS)", w, index);
                }
                String bad = validate(w);
                if (bad != null) {
                    throw new PostException(Errno.EINVAL, bad, w, index);
                }
                if (head - tail >= qp.maxSendWr) {
                    throw new PostException(Errno.ENOMEM, "send queue full (" + qp.maxSendWr + " WRs)", w, index);
                }
                String err = fill(at(head), w);
                if (err != null) {
                    throw new PostException(Errno.EINVAL, err, w, index);
                }
                HEAD.setRelease(this, head + 1);
            }
        } finally {
            POST_LOCK.setRelease(this, 0);
        }
    }

    /**
     * Takes the post lock: posters exclude each other for the few stores of one post. A CAS, then a
     * spin, then yields while another poster holds it (it holds it for no more than a post list).
     */
    private void lockPost() {
        if (POST_LOCK.compareAndSet(this, 0, 1)) {
            return;
        }
        int spins = 0;
        do {
            if (++spins > 64) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        } while (postLock != 0 || !POST_LOCK.compareAndSet(this, 0, 1));
    }

    private String validate(SendWorkRequest w) {
        return SendWrRules.check(qp.type, w, qp.maxSendSge, qp.maxInline);
    }

    private String fill(SendWqe q, SendWorkRequest w) {
        q.resetProgress();
        q.wrId = w.wrId();
        q.opcode = w.opcode();
        q.flags = w.sendFlags();
        q.signaled = qp.sqSigAll || (w.sendFlags() & SendFlag.SIGNALED) != 0;
        copySges(q, w);
        q.totalLength = w.payloadLength();
        MemorySegment given = w.inlineData();
        q.isInline = (given != null || (w.sendFlags() & SendFlag.INLINE) != 0)
                && (q.opcode.isSend() || q.opcode.isWrite());
        if (given != null) {
            copyGiven(q, given);
        } else if (q.isInline && q.totalLength > 0) {
            String err = copyInline(q);
            if (err != null) {
                return err;
            }
        }
        q.imm = w.immData();
        q.invRkey = w.invalidateRkey();
        q.remoteAddr = w.remoteAddr();
        q.rkey = w.rkey();
        q.compareAdd = w.compareAdd();
        q.swap = w.swap();
        if (qp.type == QpType.UD) {
            fillUd(q, w);
        }
        if (q.opcode == WrOpcode.BIND_MW) {
            fillBind(q, w);
        }
        return null;
    }

    // fill's rarer parts, apart so that fill stays small enough for the JIT to inline into post

    private static void copySges(SendWqe q, SendWorkRequest w) {
        int n = w.numSge();
        q.numSge = n;
        for (int i = 0; i < n; i++) {
            q.addr[i] = w.sgeAddr(i);
            q.length[i] = w.sgeLength(i);
            q.lkey[i] = w.sgeLkey(i);
        }
    }

    private static void copyGiven(SendWqe q, MemorySegment given) {
        Packet.copyBytes(given, 0, q.inlineData, 0, (int) q.totalLength);
        q.numSge = 0;
    }

    private void fillUd(SendWqe q, SendWorkRequest w) {
        AhAttr ah = w.ah().attr();
        q.dgid = ah.grh().dgid();
        q.sgid = qp.hca.gid(ah.grh().sgidIndex());
        q.remoteQpn = w.remoteQpn() & 0xFFFFFF;
        q.remoteQkey = w.remoteQkey();
        q.hopLimit = QpEngine.hopLimitOrDefault(ah.grh().hopLimit());
        q.trafficClass = ah.grh().trafficClass();
        q.flowLabel = ah.grh().flowLabel();
        q.ahInQpPd = w.ah().pd() == qp.pd;
    }

    private static void fillBind(SendWqe q, SendWorkRequest w) {
        q.mw = ((KeyHolder) w.mw()).memKey();
        q.bindRkey = w.bindRkey();
        q.bindMr = w.bindMr() == null ? null : ((KeyHolder) w.bindMr()).memKey();
        q.bindAddr = w.bindAddr();
        q.bindLength = w.bindLength();
        q.bindAccess = w.bindAccess();
    }

    /**
     * Copies an inline work request's gather list into the WQE. libibverbs looks at no lkey for
     * inline data, so an entry whose lkey does not name a region covering it is looked up by address.
     */
    /**
     * The region an inline gather entry was copied from last (guarded by the post lock): the next entry
     * naming the same lkey is checked against it without the table; a key that no longer carries that
     * lkey or fails the check goes to the table as before.
     */
    private MemKey lastInlineKey;

    private String copyInline(SendWqe q) {
        long at = 0;
        for (int i = 0; i < q.numSge; i++) {
            if (q.length[i] == 0) {
                continue;
            }
            MemKey k = lastInlineKey;
            if (k == null || k.key != q.lkey[i]
                    || MemKey.check(k, MemKey.Use.LOCAL, null, q.addr[i], q.length[i], 0, null) != KeyVerdict.OK) {
                // checked once: the last key passed above, a looked-up one here
                k = qp.hca.keys.lookup(q.lkey[i]);
                if (MemKey.check(k, MemKey.Use.LOCAL, null, q.addr[i], q.length[i], 0, null) != KeyVerdict.OK) {
                    k = qp.hca.keys.findRegionCovering(q.addr[i], q.length[i]);
                }
            }
            if (k == null) {
                // A raw address cannot be dereferenced safely from Java: ask for the segment instead.
                return "inline data at 0x" + Long.toHexString(q.addr[i]) + " is not in memory registered on "
                        + qp.hca.name + "; pass unregistered data with SendWorkRequest.inlineData(MemorySegment)";
            }
            lastInlineKey = k;
            Packet.copyBytes(k.segment, k.offsetOf(q.addr[i]), q.inlineData, at, q.length[i]);
            at += q.length[i];
        }
        q.numSge = 0;
        return null;
    }
}
