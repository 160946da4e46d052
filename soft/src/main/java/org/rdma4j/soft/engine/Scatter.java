// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.verbs.Access;

/** Writes bytes into a local scatter list (receive WQE, READ/atomic results): one rule for lkeys. */
final class Scatter {
    /** Everything was copied. */
    static final int OK = 0;
    /**
     * An entry's lkey fails {@link MemKey#check} (a live, valid MR of the QP's PD with LOCAL_WRITE
     * covering the entry), or the list is short.
     */
    static final int BAD_LKEY = 1;
    /** The payload's own memory (the sender's, in the in-process fabric) was freed meanwhile: as if lost. */
    static final int SOURCE_GONE = 2;
    /** The bytes do not fit the receive WQE (see {@link #intoRecv}). */
    static final int LENGTH = 3;

    private Scatter() {}

    /** As {@link #into}, into a receive WQE; {@link #LENGTH} when the bytes would run past its end. */
    static int intoRecv(QpEngine qp, RecvWqe recv, long offset, Packet p, MemorySegment src, int len) {
        return intoRecv(qp, recv, offset, p, src, 0, len);
    }

    /** As {@link #intoRecv}, the bytes from {@code src} starting at {@code srcOffset}. */
    static int intoRecv(QpEngine qp, RecvWqe recv, long offset, Packet p, MemorySegment src, long srcOffset,
                        int len) {
        if (offset + len > recv.totalLength) {
            return LENGTH;
        }
        return into(qp, recv.addr, recv.length, recv.lkey, recv.numSge, offset, p, src, srcOffset, len);
    }

    /**
     * Copies {@code len} bytes, from the payload of {@code p} (or from {@code src} when {@code p} is null),
     * into the list at byte {@code offset}; returns {@link #OK}, {@link #BAD_LKEY} or {@link #SOURCE_GONE}.
     */
    static int into(QpEngine qp, long[] addr, int[] length, int[] lkey, int numSge, long offset, Packet p,
                        MemorySegment src, int len) {
        return into(qp, addr, length, lkey, numSge, offset, p, src, 0, len);
    }

    /** As {@link #into}, the bytes from {@code src} starting at {@code srcOffset}. */
    static int into(QpEngine qp, long[] addr, int[] length, int[] lkey, int numSge, long offset, Packet p,
                        MemorySegment src, long srcOffset, int len) {
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
            if (MemKey.check(k, MemKey.Use.LOCAL, qp.pd, at, n, Access.LOCAL_WRITE, null) != KeyVerdict.OK) {
                return BAD_LKEY;
            }
            try {
                if (p != null) {
                    p.copyPayload(from, k.segment, k.offsetOf(at), n);
                } else {
                    MemorySegment.copy(src, srcOffset + from, k.segment, k.offsetOf(at), n);
                }
            } catch (IllegalStateException e) {
                // An arena closed during the copy: ours (the destination) is a protection error.
                return k.alive() ? SOURCE_GONE : BAD_LKEY;
            }
            from += n;
            left -= n;
            skip = 0;
        }
        return left == 0 ? OK : BAD_LKEY;
    }
}
