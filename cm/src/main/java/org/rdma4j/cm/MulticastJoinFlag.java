// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

/**
 * How {@link CmId#joinMulticast(java.net.InetAddress, MulticastJoinFlag, Object)} joins: rdma_cm's
 * {@code enum rdma_cm_mc_join_flags} for {@code rdma_join_multicast_ex}, in the same order.
 */
public enum MulticastJoinFlag {
    /** Sends to and receives from the group: the id's QP is attached to it (RDMA_MC_JOIN_FLAG_FULLMEMBER). */
    FULL_MEMBER,
    /**
     * Only sends to the group: MULTICAST_JOIN still brings the address handle and Q_Key, but the QP is not
     * attached and (on RoCE) the interface does not join the IP group (RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER).
     */
    SEND_ONLY_FULL_MEMBER
}
