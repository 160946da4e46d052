// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;

import static org.rdma4j.nativeverbs.abi.CLayout.INT;
import static org.rdma4j.nativeverbs.abi.CLayout.PTR;
import static org.rdma4j.nativeverbs.abi.CLayout.U16;
import static org.rdma4j.nativeverbs.abi.CLayout.U64;
import static org.rdma4j.nativeverbs.abi.CLayout.U8;
import static org.rdma4j.nativeverbs.abi.CLayout.array;
import static org.rdma4j.nativeverbs.abi.CLayout.m;
import static org.rdma4j.nativeverbs.abi.CLayout.struct;
import static org.rdma4j.nativeverbs.abi.CLayout.union;

import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;

/**
 * Struct layouts of librdmacm's rdma/rdma_cma.h (and the socket addresses of netinet/in.h it passes),
 * written by hand from the headers and checked member by member by the layout probe (LayoutProbeTest).
 * Names are the C tags and member names.
 */
public final class CmLayouts {
    private CmLayouts() {}

    public static final StructLayout sockaddr_in = struct("sockaddr_in",
            m("sin_family", U16), m("sin_port", U16), struct("sin_addr", m("s_addr", INT)), array("sin_zero", 8, U8));

    public static final StructLayout sockaddr_in6 = struct("sockaddr_in6",
            m("sin6_family", U16), m("sin6_port", U16), m("sin6_flowinfo", INT),
            array("sin6_addr", 16, U8), m("sin6_scope_id", INT));

    /** glibc's: the family, 118 bytes of padding and an unsigned long that aligns it to 8. */
    public static final StructLayout sockaddr_storage = struct("sockaddr_storage",
            m("ss_family", U16), array("__ss_padding", 118, U8), m("__ss_align", U64));

    public static final StructLayout rdma_ib_addr = struct("rdma_ib_addr",
            DeviceLayouts.ibv_gid.withName("sgid"), DeviceLayouts.ibv_gid.withName("dgid"), m("pkey", U16));

    public static final StructLayout rdma_addr = struct("rdma_addr",
            union(null, sockaddr_in.withName("src_sin"), sockaddr_in6.withName("src_sin6"),
                    sockaddr_storage.withName("src_storage")),
            union(null, sockaddr_in.withName("dst_sin"), sockaddr_in6.withName("dst_sin6"),
                    sockaddr_storage.withName("dst_storage")),
            union("addr", rdma_ib_addr.withName("ibaddr")));

    public static final StructLayout rdma_route = struct("rdma_route",
            rdma_addr.withName("addr"), m("path_rec", PTR), m("num_paths", INT));

    public static final StructLayout rdma_event_channel = struct("rdma_event_channel", m("fd", INT));

    public static final StructLayout rdma_cm_id = struct("rdma_cm_id",
            m("verbs", PTR), m("channel", PTR), m("context", PTR), m("qp", PTR), rdma_route.withName("route"),
            m("ps", INT), m("port_num", U8), m("event", PTR), m("send_cq_channel", PTR), m("send_cq", PTR),
            m("recv_cq_channel", PTR), m("recv_cq", PTR), m("srq", PTR), m("pd", PTR), m("qp_type", INT));

    public static final StructLayout rdma_conn_param = struct("rdma_conn_param",
            m("private_data", PTR), m("private_data_len", U8), m("responder_resources", U8),
            m("initiator_depth", U8), m("flow_control", U8), m("retry_count", U8), m("rnr_retry_count", U8),
            m("srq", U8), m("qp_num", INT));

    public static final StructLayout rdma_ud_param = struct("rdma_ud_param",
            m("private_data", PTR), m("private_data_len", U8), QpLayouts.IBV_AH_ATTR.withName("ah_attr"),
            m("qp_num", INT), m("qkey", INT));

    public static final StructLayout rdma_cm_event = struct("rdma_cm_event",
            m("id", PTR), m("listen_id", PTR), m("event", INT), m("status", INT),
            union("param", rdma_conn_param.withName("conn"), rdma_ud_param.withName("ud")));

    public static final StructLayout rdma_cm_join_mc_attr_ex = struct("rdma_cm_join_mc_attr_ex",
            m("comp_mask", INT), m("join_flags", INT), m("addr", PTR));
}
