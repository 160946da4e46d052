package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;

/**
 * What an lkey or rkey names in the key table: a memory region or a memory window. A key is
 * {@code index << 8 | variant}; the 24-bit index is random and unique per device, the 8-bit variant is
 * what {@code ibv_inc_rkey} advances. Fields are written on the control path (or by a bind work
 * request) and read by the engine; {@link #valid} is the publication point. Thread safe for that use.
 */
public final class MemKey {
    public static final int MR = 0;
    public static final int MW_TYPE1 = 1;
    public static final int MW_TYPE2 = 2;

    public final int kind;
    /** Identity of the owning protection domain (compared by reference). */
    public volatile Object pd;
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
    public volatile Object boundQp;
    /** For an MR: the number of windows bound to it. */
    public final java.util.concurrent.atomic.AtomicInteger boundWindows = new java.util.concurrent.atomic.AtomicInteger();

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
}
