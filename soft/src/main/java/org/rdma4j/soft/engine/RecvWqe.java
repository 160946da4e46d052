// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

/** A posted receive: wr_id and the scatter list copied at post time. Owned by its queue. */
public final class RecvWqe {
    public long wrId;
    public int numSge;
    public final long[] addr;
    public final int[] length;
    public final int[] lkey;
    public long totalLength;

    RecvWqe(int maxSge) {
        addr = new long[maxSge];
        length = new int[maxSge];
        lkey = new int[maxSge];
    }
}
