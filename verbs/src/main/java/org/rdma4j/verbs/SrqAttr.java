// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Shared receive queue attributes ({@code struct ibv_srq_attr}); used to create, modify and query.
 * {@code srqLimit} arms the limit event: when fewer than that many receives remain,
 * IBV_EVENT_SRQ_LIMIT_REACHED fires once and the limit disarms (reads back 0) (S-SRQ-2).
 *
 * @param maxWr    {@code max_wr}: the number of receives the SRQ holds, 1 to {@link DeviceAttr#maxSrqWr()}
 * @param maxSge   {@code max_sge}: scatter entries per receive, 1 to {@link DeviceAttr#maxSrqSge()}
 *                 (ignored by modify)
 * @param srqLimit {@code srq_limit}: the low-water mark, 0 (disarmed) to {@code maxWr}
 */
public record SrqAttr(int maxWr, int maxSge, int srqLimit) {
}
