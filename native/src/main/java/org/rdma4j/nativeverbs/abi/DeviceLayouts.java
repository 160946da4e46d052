// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;

import static org.rdma4j.nativeverbs.abi.CLayout.INT;
import static org.rdma4j.nativeverbs.abi.CLayout.PTR;
import static org.rdma4j.nativeverbs.abi.CLayout.SIZE_T;
import static org.rdma4j.nativeverbs.abi.CLayout.U16;
import static org.rdma4j.nativeverbs.abi.CLayout.U64;
import static org.rdma4j.nativeverbs.abi.CLayout.U8;
import static org.rdma4j.nativeverbs.abi.CLayout.array;
import static org.rdma4j.nativeverbs.abi.CLayout.m;
import static org.rdma4j.nativeverbs.abi.CLayout.struct;
import static org.rdma4j.nativeverbs.abi.CLayout.union;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;

/**
 * Struct layouts of verbs.h for devices, contexts, ports, GIDs, PDs, MRs, MWs, channels and
 * asynchronous events, written by hand from the header and checked member by member against it by
 * the layout probe (LayoutProbeTest). Names are the C tags and member names.
 */
public final class DeviceLayouts {
    private DeviceLayouts() {}

    public static final UnionLayout ibv_gid = union("ibv_gid",
            array("raw", 16, U8),
            struct("global", m("subnet_prefix", U64), m("interface_id", U64)));

    public static final StructLayout ibv_gid_entry = struct("ibv_gid_entry",
            ibv_gid.withName("gid"), m("gid_index", INT), m("port_num", INT), m("gid_type", INT),
            m("ndev_ifindex", INT));

    public static final StructLayout ibv_device_attr = struct("ibv_device_attr",
            array("fw_ver", 64, U8), m("node_guid", U64), m("sys_image_guid", U64), m("max_mr_size", U64),
            m("page_size_cap", U64), m("vendor_id", INT), m("vendor_part_id", INT), m("hw_ver", INT),
            m("max_qp", INT), m("max_qp_wr", INT), m("device_cap_flags", INT), m("max_sge", INT),
            m("max_sge_rd", INT), m("max_cq", INT), m("max_cqe", INT), m("max_mr", INT), m("max_pd", INT),
            m("max_qp_rd_atom", INT), m("max_ee_rd_atom", INT), m("max_res_rd_atom", INT),
            m("max_qp_init_rd_atom", INT), m("max_ee_init_rd_atom", INT), m("atomic_cap", INT),
            m("max_ee", INT), m("max_rdd", INT), m("max_mw", INT), m("max_raw_ipv6_qp", INT),
            m("max_raw_ethy_qp", INT), m("max_mcast_grp", INT), m("max_mcast_qp_attach", INT),
            m("max_total_mcast_qp_attach", INT), m("max_ah", INT), m("max_fmr", INT),
            m("max_map_per_fmr", INT), m("max_srq", INT), m("max_srq_wr", INT), m("max_srq_sge", INT),
            m("max_pkeys", U16), m("local_ca_ack_delay", U8), m("phys_port_cnt", U8));

    public static final StructLayout ibv_port_attr = struct("ibv_port_attr",
            m("state", INT), m("max_mtu", INT), m("active_mtu", INT), m("gid_tbl_len", INT),
            m("port_cap_flags", INT), m("max_msg_sz", INT), m("bad_pkey_cntr", INT), m("qkey_viol_cntr", INT),
            m("pkey_tbl_len", U16), m("lid", U16), m("sm_lid", U16), m("lmc", U8), m("max_vl_num", U8),
            m("sm_sl", U8), m("subnet_timeout", U8), m("init_type_reply", U8), m("active_width", U8),
            m("active_speed", U8), m("phys_state", U8), m("link_layer", U8), m("flags", U8),
            m("port_cap_flags2", U16));

    public static final StructLayout ibv_device = struct("ibv_device",
            struct("_ops", m("_dummy1", PTR), m("_dummy2", PTR)),
            m("node_type", INT), m("transport_type", INT),
            array("name", 64, U8), array("dev_name", 64, U8), array("dev_path", 256, U8),
            array("ibdev_path", 256, U8));

    /** The function pointers of {@code struct ibv_context_ops}, in order; the inline verbs call some of them. */
    private static final String[] CONTEXT_OPS = {
        "_compat_query_device", "_compat_query_port", "_compat_alloc_pd", "_compat_dealloc_pd",
        "_compat_reg_mr", "_compat_rereg_mr", "_compat_dereg_mr", "alloc_mw", "bind_mw", "dealloc_mw",
        "_compat_create_cq", "poll_cq", "req_notify_cq", "_compat_cq_event", "_compat_resize_cq",
        "_compat_destroy_cq", "_compat_create_srq", "_compat_modify_srq", "_compat_query_srq",
        "_compat_destroy_srq", "post_srq_recv", "_compat_create_qp", "_compat_query_qp",
        "_compat_modify_qp", "_compat_destroy_qp", "post_send", "post_recv", "_compat_create_ah",
        "_compat_destroy_ah", "_compat_attach_mcast", "_compat_detach_mcast", "_compat_async_event"};

    public static final StructLayout ibv_context_ops = struct("ibv_context_ops",
            java.util.Arrays.stream(CONTEXT_OPS).map(n -> m(n, PTR)).toArray(MemoryLayout[]::new));

    /** {@code pthread_mutex_t} of x86-64 and aarch64 glibc: 40 and 48 bytes, 8-aligned; only its place matters. */
    static final MemoryLayout PTHREAD_MUTEX = MemoryLayout.sequenceLayout(
            System.getProperty("os.arch", "").equals("aarch64") ? 6 : 5, U64);

    public static final StructLayout ibv_context = struct("ibv_context",
            m("device", PTR), ibv_context_ops.withName("ops"), m("cmd_fd", INT), m("async_fd", INT),
            m("num_comp_vectors", INT), PTHREAD_MUTEX.withName("mutex"), m("abi_compat", PTR));

    /**
     * The members of {@code struct verbs_context} the binding uses: {@code query_port} (first) and
     * {@code sz}, which sits right before the embedded {@code struct ibv_context} (last). The 37
     * pointers between are not named; the probe checks {@code sz} and {@code context} land where C
     * puts them, so the gap is right.
     */
    public static final StructLayout verbs_context = struct("verbs_context",
            m("query_port", PTR), MemoryLayout.paddingLayout(37 * 8), m("_ABI_placeholder3", U64),
            m("sz", SIZE_T), ibv_context.withName("context"));

    public static final StructLayout ibv_pd = struct("ibv_pd", m("context", PTR), m("handle", INT));

    public static final StructLayout ibv_mr = struct("ibv_mr",
            m("context", PTR), m("pd", PTR), m("addr", PTR), m("length", SIZE_T), m("handle", INT),
            m("lkey", INT), m("rkey", INT));

    public static final StructLayout ibv_mw = struct("ibv_mw",
            m("context", PTR), m("pd", PTR), m("rkey", INT), m("handle", INT), m("type", INT));

    public static final StructLayout ibv_mw_bind_info = struct("ibv_mw_bind_info",
            m("mr", PTR), m("addr", U64), m("length", U64), m("mw_access_flags", INT));

    public static final StructLayout ibv_mw_bind = struct("ibv_mw_bind",
            m("wr_id", U64), m("send_flags", INT), ibv_mw_bind_info.withName("bind_info"));

    public static final StructLayout ibv_comp_channel = struct("ibv_comp_channel",
            m("context", PTR), m("fd", INT), m("refcnt", INT));

    public static final StructLayout ibv_async_event = struct("ibv_async_event",
            union("element", m("cq", PTR), m("qp", PTR), m("srq", PTR), m("wq", PTR), m("port_num", INT)),
            m("event_type", INT));

    /** {@code struct pollfd} of poll(2) (not verbs.h; the probe checks it against poll.h). */
    public static final StructLayout pollfd = struct("pollfd", m("fd", INT), m("events", U16), m("revents", U16));
}
