// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Shared receive queue attributes ({@code struct ibv_srq_attr}); used to create, modify and query.
 * {@code srqLimit} arms the limit event: when fewer than that many receives remain,
 * IBV_EVENT_SRQ_LIMIT_REACHED fires once and the limit disarms (reads back 0).
 */
public record SrqAttr(int maxWr, int maxSge, int srqLimit) {
}
