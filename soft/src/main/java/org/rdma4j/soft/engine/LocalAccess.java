// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import org.rdma4j.soft.packet.Packet;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * The requester's side of local memory: the gather list of a send WQE checked against its lkeys
 * ({@link MemKey#check} with local use) and added to a packet, and the local operations a send queue
 * executes without a packet (BIND_MW, LOCAL_INV). rxe's copy_data on the send side and its
 * rxe_do_local_ops. Runs only inside the QP task; allocation free.
 */
final class LocalAccess {
    private LocalAccess() {
    }

    /** The key of a one-entry gather list if it lets this QP read {@code len} bytes there, else null. */
    static MemKey gatherKey(QpEngine qp, SendWqe w, int len) {
        MemKey k = qp.hca.keys.lookup(w.lkey[0]);
        return MemKey.check(k, MemKey.Use.LOCAL, qp.pd, w.addr[0], len, 0, null) == KeyVerdict.OK ? k : null;
    }


    /** Adds the payload bytes [offset, offset + len) of {@code w} to {@code p}; false on a bad lkey. */
    static boolean gather(QpEngine qp, SendWqe w, Packet p, long offset, int len) {
        if (len == 0) {
            return true;
        }
        if (w.isInline) {
            p.addPiece(w.inlineData, offset, len);
            return true;
        }
        long skip = offset;
        int left = len;
        for (int i = 0; i < w.numSge && left > 0; i++) {
            long l = Integer.toUnsignedLong(w.length[i]);
            if (skip >= l) {
                skip -= l;
                continue;
            }
            int n = (int) Math.min(l - skip, left);
            MemKey k = qp.hca.keys.lookup(w.lkey[i]);
            long at = w.addr[i] + skip;
            if (MemKey.check(k, MemKey.Use.LOCAL, qp.pd, at, n, 0, null) != KeyVerdict.OK) {
                return false;
            }
            p.addPiece(k.segment, k.offsetOf(at), n);
            left -= n;
            skip = 0;
        }
        return left == 0;
    }

    /** BIND_MW and LOCAL_INV, by the key layer's rules; returns the completion status. */
    static WcStatus executeLocal(QpEngine qp, SendWqe w) {
        if (w.opcode == WrOpcode.LOCAL_INV) {
            MemKey k = qp.hca.keys.lookup(w.invRkey);
            if (MemKey.check(k, MemKey.Use.INVALIDATE, qp.pd, 0, 0, 0, null) != KeyVerdict.OK) {
                return WcStatus.LOC_QP_OP_ERR;
            }
            k.invalidate();
            return WcStatus.SUCCESS;
        }
        MemKey mw = w.mw;
        if (mw == null) {
            return WcStatus.MW_BIND_ERR;
        }
        return mw.bind(w.bindMr, qp.pd, qp, w.bindRkey, w.bindAddr, w.bindLength, w.bindAccess);
    }
}
