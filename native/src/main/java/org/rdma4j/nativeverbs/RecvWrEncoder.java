// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.QpLayouts.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.RecvWorkRequest;

/**
 * Encodes a chain of {@link RecvWorkRequest}s into {@code struct ibv_recv_wr} and {@code struct ibv_sge}
 * arrays in native memory kept for the life of its queue (a QP's receive queue or an SRQ), so a post
 * allocates nothing; the arrays grow once when a longer chain than ever before is posted. Not thread
 * safe: its queue serializes posts.
 */
final class RecvWrEncoder extends WrChain {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    RecvWrEncoder(int maxSge) {
        super(RECV_WR_SIZE, RWR_NEXT, RWR_SG_LIST, maxSge, 4);
    }

    /**
     * Encodes the chain at {@code head}. A request with more SGEs than the queue's max_recv_sge ends the
     * chain: the ones before it are encoded (to be posted) and the refusal is returned, to be thrown after.
     *
     * @return null, or the EINVAL refusal of the first request refused
     * @throws PostException EINVAL when the first request is refused (nothing to post)
     */
    PostException encode(RecvWorkRequest head) {
        int n = 0;
        PostException refused = null;
        for (RecvWorkRequest w = head; w != null; w = w.next()) {
            if (n == capacity()) {
                grow(capacity() * 2);
            }
            int numSge = w.numSge();
            if (numSge > maxSge) {
                refused = new PostException(Errno.EINVAL, "receive request has " + numSge + " SGEs, max_recv_sge is "
                        + maxSge, w, n);
                break;
            }
            long base = link(n);
            MemorySegment wrs = wrs();
            wrs.set(LONG, base + RWR_WR_ID, w.wrId());
            wrs.set(INT, base + RWR_NUM_SGE, numSge);
            putSges(n, w, numSge);
            n++;
        }
        if (n == 0) {
            throw refused;
        }
        end(n);
        return refused;
    }
}
