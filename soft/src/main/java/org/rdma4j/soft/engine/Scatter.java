package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.link.Packet;
import org.rdma4j.verbs.Access;

/** Writes bytes into a local scatter list (receive WQE, READ/atomic results): one rule for lkeys. */
final class Scatter {
    private Scatter() {}

    /**
     * Copies {@code len} bytes, from the payload of {@code p} (or from {@code src} when {@code p} is null),
     * into the list at byte {@code offset}. False if an entry's lkey is not a valid MR of the QP's PD with
     * LOCAL_WRITE covering it, or the list is too short.
     */
    static boolean into(QpEngine qp, long[] addr, int[] length, int[] lkey, int numSge, long offset, Packet p,
                        MemorySegment src, int len) {
        long skip = offset;
        int left = len;
        int from = 0;
        for (int i = 0; i < numSge && left > 0; i++) {
            long l = Integer.toUnsignedLong(length[i]);
            if (skip >= l) {
                skip -= l;
                continue;
            }
            int n = (int) Math.min(l - skip, left);
            long at = addr[i] + skip;
            MemKey k = qp.hca.keys.lookup(lkey[i]);
            if (k == null || !k.valid || k.isWindow() || k.pd != qp.pd || (k.access & Access.LOCAL_WRITE_BIT) == 0
                    || !k.covers(at, n)) {
                return false;
            }
            if (p != null) {
                p.copyPayload(from, k.segment, k.offsetOf(at), n);
            } else {
                MemorySegment.copy(src, from, k.segment, k.offsetOf(at), n);
            }
            from += n;
            left -= n;
            skip = 0;
        }
        return left == 0;
    }
}
