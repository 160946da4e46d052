// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.WcStatus;

/**
 * What an lkey or rkey names in the key table: a memory region or a memory window. A key is
 * {@code index << 8 | variant}; the 24-bit index is random and unique per device, the 8-bit variant is
 * what {@code ibv_inc_rkey} advances. Fields are written on the control path (or by a bind work
 * request) and read by the engine; {@link #valid} is the publication point. Thread safe for that use.
 *
 * <p>The key layer's rules live here, once: {@link #check} says whether a key may be used for an
 * access (every lkey and rkey check of the engine asks it), {@link #bind} binds a window, and
 * {@link #invalidate} makes a key unusable.
 */
public final class MemKey {
    public static final int MR = 0;
    public static final int MW_TYPE1 = 1;
    public static final int MW_TYPE2 = 2;

    public final int kind;
    /** The owning protection domain (compared by reference). */
    public volatile Pd pd;
    public volatile int key;
    /** Valid: usable by the data path. An unbound window or a deregistered MR is not valid. */
    public volatile boolean valid;
    /** The memory this key gives access to (an MR's segment; a window's MR segment). */
    public volatile MemorySegment segment;
    /** Address of segment offset 0. */
    public volatile long base;
    /** Accessible range [start, start + length). */
    public volatile long start;
    public volatile long length;
    public volatile int access;
    /** For a window: the MR it is bound to. */
    public volatile MemKey boundMr;
    /**
     * For a type-2 window: the QP it is bound through, compared by identity. A QP number can come back
     * after its QP is destroyed; the window must not follow it to the new QP.
     */
    public volatile QpEngine boundQp;
    /**
     * For an MR: the number of windows bound to it, the only thing that keeps it from being
     * deregistered (as rxe_dereg_mr). Posted work requests do not hold it: they name it by lkey and
     * look it up each time they touch memory, so one that runs after deregistration fails as a bad
     * lkey does and never reaches the memory. Changed under this key's lock (see {@link #bind}).
     */
    public final AtomicInteger boundWindows = new AtomicInteger();
    /** A window that has been deallocated: no bind may use it again (guarded by this). */
    private boolean freed;

    /** What a key is used for, which decides the rules {@link #check} applies. */
    public enum Use {
        /** An lkey: a memory region, never a window. */
        LOCAL,
        /** An rkey: a region or a bound window; a type-2 window only through the QP it was bound through. */
        REMOTE,
        /**
         * LOCAL_INV or SEND_WITH_INV: only a type-2 window of the PD can be invalidated (as rxe: type-1
         * windows and reg_mr regions refuse), bound or not; range and access do not apply.
         */
        INVALIDATE
    }

    public MemKey(int kind) {
        this.kind = kind;
    }

    /** False once the memory behind this key has been freed (its arena closed): it is no memory any more. */
    public boolean alive() {
        MemorySegment s = segment;
        return s != null && s.scope().isAlive();
    }

    public boolean isWindow() {
        return kind != MR;
    }

    /** True when [addr, addr + len) lies inside the accessible range. */
    public boolean covers(long addr, long len) {
        long s = start;
        return len >= 0 && addr >= s && addr - s <= length - len;
    }

    /** The segment offset of address {@code addr}. */
    public long offsetOf(long addr) {
        return addr - base;
    }

    /**
     * The one key check: whether {@code k} (a lookup's result, possibly null) may be used for
     * {@code use} over {@code [addr, addr + len)} with every bit of {@code access}. Allocation free.
     *
     * @param pd   the PD the user must share with the key; null skips the PD rule (inline data, where
     *             libibverbs looks at no lkey at all)
     * @param viaQp for {@link Use#REMOTE}: the QP the request arrived on
     */
    public static KeyVerdict check(MemKey k, Use use, Pd pd, long addr, long len, int access, QpEngine viaQp) {
        if (k == null) {
            return KeyVerdict.NO_KEY;
        }
        if (use == Use.INVALIDATE) {
            if (k.pd != pd) {
                return KeyVerdict.WRONG_PD;
            }
            return k.kind == MW_TYPE2 ? KeyVerdict.OK : KeyVerdict.WRONG_KIND;
        }
        if (!k.valid) {
            return KeyVerdict.INVALID;
        }
        if (use == Use.LOCAL && k.isWindow()) {
            return KeyVerdict.WRONG_KIND;
        }
        if (pd != null && k.pd != pd) {
            return KeyVerdict.WRONG_PD;
        }
        if ((k.access & access) != access) {
            return KeyVerdict.NO_ACCESS;
        }
        if (!k.covers(addr, len)) {
            return KeyVerdict.OUT_OF_RANGE;
        }
        if (!k.alive()) {
            return KeyVerdict.FREED;
        }
        if (use == Use.REMOTE && k.kind == MW_TYPE2 && k.boundQp != viaQp) {
            return KeyVerdict.WRONG_QP;
        }
        return KeyVerdict.OK;
    }

    /**
     * The key an incoming request names, if {@link #check} lets {@code qp} use it remotely for
     * {@code access} over {@code [va, va + length)}; else null (the request is NAKed REMOTE_ACCESS).
     */
    public static MemKey remote(KeyTable keys, int rkey, QpEngine qp, long va, long length, int access) {
        MemKey k = keys.lookup(rkey);
        return check(k, Use.REMOTE, qp.pd, va, length, access, qp) == KeyVerdict.OK ? k : null;
    }

    /**
     * Binds this window (a BIND_MW work request, executed in order on {@code qp}'s send queue) to
     * {@code [addr, addr + length)} of {@code mr} under {@code newRkey}; length 0 unbinds a type-1
     * window. Returns SUCCESS or MW_BIND_ERR, by the IBTA rules rxe applies in rxe_mw.c.
     *
     * <p>Runs under the window's lock (as rxe_bind_mw under mw->lock), which {@link #invalidate} and
     * {@link #free} take too, so a window deallocated meanwhile is never bound afterwards; the MR is
     * checked and claimed under its own lock, which {@link #deregisterUnlessBound} takes, so a
     * deregistration either sees this window or this bind sees the region gone. Bind work requests
     * are rare; no other work request takes either lock.
     */
    public synchronized WcStatus bind(MemKey mr, Pd qpPd, QpEngine qp, int newRkey, long addr, long length,
                                      int bindAccess) {
        if (freed) {
            return WcStatus.MW_BIND_ERR; // deallocated after the bind was posted (rxe: no such window)
        }
        if (pd != qpPd) {
            return WcStatus.MW_BIND_ERR;
        }
        if ((bindAccess & ~Access.ALL) != 0) {
            return WcStatus.MW_BIND_ERR; // unknown access bits (rxe: EOPNOTSUPP, completed as a bind error)
        }
        boolean zeroBased = (bindAccess & Access.ZERO_BASED) != 0;
        if (kind == MW_TYPE1 && zeroBased) {
            return WcStatus.MW_BIND_ERR; // o10-36.2.2: type 1 windows are VA-based
        }
        if (kind == MW_TYPE2) {
            if (((newRkey ^ key) & 0xFFFFFF00) != 0) {
                return WcStatus.MW_BIND_ERR; // a type-2 rkey keeps the window's index, only the variant changes
            }
            // o10-37.2.30: only a free (never bound or invalidated) type-2 window may be bound;
            // o10-37.2.40: it is freed by invalidation, not by a zero-length bind
            if (valid || length == 0) {
                return WcStatus.MW_BIND_ERR;
            }
        }
        if (length != 0 && (mr == null || mr.isWindow() || !mr.claimForWindow(qpPd, addr, length, bindAccess))) {
            return WcStatus.MW_BIND_ERR;
        }
        valid = false;
        MemKey old = boundMr;
        if (old != null) {
            old.boundWindows.decrementAndGet();
            boundMr = null;
        }
        key = newRkey;
        if (length != 0) {
            segment = mr.segment;
            // a zero-based (type-2) window's address 0 is the bind address in the MR
            base = zeroBased ? mr.base - addr : mr.base;
            start = zeroBased ? 0 : addr;
            this.length = length;
            access = bindAccess;
            boundMr = mr;
            boundQp = kind == MW_TYPE2 ? qp : null;
            valid = true; // mr.boundWindows already counts it (claimForWindow)
        }
        return WcStatus.SUCCESS;
    }

    /**
     * For an MR: whether a window of {@code qpPd} may be bound over {@code [addr, addr + length)} with
     * {@code bindAccess}; if so counts the window in {@link #boundWindows}, under this region's lock,
     * so that {@link #deregisterUnlessBound} and a re-registration see it.
     */
    private synchronized boolean claimForWindow(Pd qpPd, long addr, long length, int bindAccess) {
        if (!valid || pd != qpPd || (access & Access.MW_BIND) == 0 || !covers(addr, length)) {
            return false;
        }
        int remoteWriteLike = Access.REMOTE_WRITE | Access.REMOTE_ATOMIC;
        if ((bindAccess & remoteWriteLike) != 0 && (access & Access.LOCAL_WRITE) == 0) {
            return false;
        }
        boundWindows.incrementAndGet();
        return true;
    }

    /**
     * For an MR: makes it unusable for good unless a window is bound to it (then false, and nothing
     * changes), in one step against {@link #bind}. Posted work requests naming it do not matter: each
     * looks its lkey up when it runs, finds nothing and fails as with a bad lkey, as with rxe after
     * rxe_dereg_mr.
     */
    public synchronized boolean deregisterUnlessBound() {
        if (boundWindows.get() > 0) {
            return false;
        }
        valid = false;
        return true;
    }

    /**
     * Makes this key unusable (LOCAL_INV, SEND_WITH_INV); a window lets go of its MR and of its QP.
     * Under the key's lock, against {@link #bind} (as rxe_invalidate_mw under mw->lock).
     */
    public synchronized void invalidate() {
        valid = false;
        if (isWindow()) {
            MemKey mr = boundMr;
            if (mr != null) {
                mr.boundWindows.decrementAndGet();
                boundMr = null;
            }
            boundQp = null; // a freed window holds no QP (it would keep a destroyed one reachable)
        }
    }

    /** Deallocates a window: invalidated, and never bound again (a bind posted before fails MW_BIND_ERR). */
    public synchronized void free() {
        freed = true;
        invalidate();
    }
}
