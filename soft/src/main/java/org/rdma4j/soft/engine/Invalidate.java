package org.rdma4j.soft.engine;

/** Invalidation of a key (LOCAL_INV, SEND_WITH_INV, window dealloc): one place, one rule. */
public final class Invalidate {
    private Invalidate() {}

    /** Makes {@code k} unusable; a window releases its MR and its QP. */
    public static void apply(MemKey k) {
        k.valid = false;
        if (k.isWindow()) {
            MemKey mr = k.boundMr;
            if (mr != null) {
                mr.boundWindows.decrementAndGet();
                k.boundMr = null;
            }
            k.boundQp = null; // a freed window holds no QP (it would keep a destroyed one reachable)
        }
    }
}
