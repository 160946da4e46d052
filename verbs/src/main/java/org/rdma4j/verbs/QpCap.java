// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** Queue pair capabilities ({@code struct ibv_qp_cap}). Mutable; not thread safe. */
public final class QpCap {
    public int maxSendWr;
    public int maxRecvWr;
    public int maxSendSge;
    public int maxRecvSge;
    public int maxInlineData;

    public QpCap() {}

    public QpCap(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {
        this.maxSendWr = maxSendWr;
        this.maxRecvWr = maxRecvWr;
        this.maxSendSge = maxSendSge;
        this.maxRecvSge = maxRecvSge;
        this.maxInlineData = maxInlineData;
    }

    public QpCap copy() {
        return new QpCap(maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData);
    }

    @Override
    public String toString() {
        return "QpCap[sendWr=" + maxSendWr + ", recvWr=" + maxRecvWr + ", sendSge=" + maxSendSge
                + ", recvSge=" + maxRecvSge + ", inline=" + maxInlineData + "]";
    }
}
