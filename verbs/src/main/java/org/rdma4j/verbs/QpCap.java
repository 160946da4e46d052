// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Queue pair capabilities ({@code struct ibv_qp_cap}): asked for at creation ({@link QpInitAttr#cap}),
 * at least as large once created ({@link QueuePair#cap()}). Each is at most the device's limit
 * ({@link DeviceAttr#maxQpWr()}, {@link DeviceAttr#maxSge()}, {@link DeviceAttr#maxInlineData()}),
 * else the create fails EINVAL (S-QP-1). Mutable; not thread safe.
 */
public final class QpCap {
    /** {@code max_send_wr}: send work requests outstanding at once; one more is ENOMEM at post (S-POST-2). */
    public int maxSendWr;
    /** {@code max_recv_wr}: receive work requests outstanding at once. */
    public int maxRecvWr;
    /** {@code max_send_sge}: gather entries per send work request. */
    public int maxSendSge;
    /** {@code max_recv_sge}: scatter entries per receive work request. */
    public int maxRecvSge;
    /** {@code max_inline_data}: bytes of inline data per send work request. */
    public int maxInlineData;

    /** All capacities 0. */
    public QpCap() {}

    /**
     * The given capacities.
     *
     * @param maxSendWr     {@code max_send_wr}
     * @param maxRecvWr     {@code max_recv_wr}
     * @param maxSendSge    {@code max_send_sge}
     * @param maxRecvSge    {@code max_recv_sge}
     * @param maxInlineData {@code max_inline_data}, in bytes
     */
    public QpCap(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {
        this.maxSendWr = maxSendWr;
        this.maxRecvWr = maxRecvWr;
        this.maxSendSge = maxSendSge;
        this.maxRecvSge = maxRecvSge;
        this.maxInlineData = maxInlineData;
    }

    /** {@return a new object with the same capacities} */
    public QpCap copy() {
        return new QpCap(maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData);
    }

    /** {@return the capacities, e.g. {@code QpCap[sendWr=16, recvWr=16, sendSge=1, recvSge=1, inline=0]}} */
    @Override
    public String toString() {
        return "QpCap[sendWr=" + maxSendWr + ", recvWr=" + maxRecvWr + ", sendSge=" + maxSendSge
                + ", recvSge=" + maxRecvSge + ", inline=" + maxInlineData + "]";
    }
}
