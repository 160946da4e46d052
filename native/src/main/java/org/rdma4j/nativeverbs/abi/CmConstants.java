// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;

/** Constants of rdma/rdma_cma.h and the socket headers, named as in C; the layout probe checks every value. */
public final class CmConstants {
    private CmConstants() {}

    public static final int AF_INET = 2;
    public static final int AF_INET6 = 10;

    // enum rdma_port_space
    public static final int RDMA_PS_TCP = 0x0106;
    public static final int RDMA_PS_UDP = 0x0111;

    // enum rdma_cm_event_type (the ones the binding looks at)
    public static final int RDMA_CM_EVENT_CONNECT_REQUEST = 4;
    public static final int RDMA_CM_EVENT_CONNECT_RESPONSE = 5;
    public static final int RDMA_CM_EVENT_ESTABLISHED = 9;
    public static final int RDMA_CM_EVENT_MULTICAST_JOIN = 12;
    public static final int RDMA_CM_EVENT_MULTICAST_ERROR = 13;
    public static final int RDMA_CM_EVENT_TIMEWAIT_EXIT = 15;

    // enum rdma_cm_join_mc_attr_mask, enum rdma_cm_mc_join_flags
    public static final int RDMA_CM_JOIN_MC_ATTR_ADDRESS = 1;
    public static final int RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS = 2;
    public static final int RDMA_MC_JOIN_FLAG_FULLMEMBER = 0;
    public static final int RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER = 1;

    // rdma_set_option
    public static final int RDMA_OPTION_ID = 0;
    public static final int RDMA_OPTION_ID_ACK_TIMEOUT = 3;
}
