// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.abi;


import static org.rdma4j.nativeverbs.abi.CLayout.INT;
import static org.rdma4j.nativeverbs.abi.CLayout.PTR;
import static org.rdma4j.nativeverbs.abi.CLayout.U16;
import static org.rdma4j.nativeverbs.abi.CLayout.U64;
import static org.rdma4j.nativeverbs.abi.CLayout.U8;
import static org.rdma4j.nativeverbs.abi.CLayout.array;
import static org.rdma4j.nativeverbs.abi.CLayout.offset;
import static org.rdma4j.nativeverbs.abi.CLayout.struct;
import static org.rdma4j.nativeverbs.abi.CLayout.union;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.List;

/**
 * The structs of verbs.h that queue pairs, shared receive queues, completion queues, address handles
 * and the data path use, written by hand after {@code /usr/include/infiniband/verbs.h} and checked
 * member by member against it by {@code LayoutProbeTest}. The {@code *_OFF} constants are the offsets
 * the codecs read and write (plain {@code long}s, so the JIT folds them into the accesses).
 */
public final class QpLayouts {
    private QpLayouts() {}

    /** glibc's {@code pthread_cond_t}: 48 bytes, 8-byte aligned, on x86-64 and aarch64; only its place matters. */
    static final MemoryLayout PTHREAD_COND = MemoryLayout.sequenceLayout(6, U64);

    /** {@code union ibv_gid}: 16 raw bytes, or the subnet prefix and interface id (8-byte aligned). */
    static MemoryLayout gid(String member) {
        return union(null, array("raw", 16, U8),
                struct(null, U64.withName("subnet_prefix"), U64.withName("interface_id")).withName("global"))
                .withName(member);
    }

    public static final StructLayout IBV_SGE = struct("ibv_sge",
            U64.withName("addr"), INT.withName("length"), INT.withName("lkey"));

    public static final StructLayout IBV_MW_BIND_INFO = struct("ibv_mw_bind_info",
            PTR.withName("mr"), U64.withName("addr"), U64.withName("length"), INT.withName("mw_access_flags"));

    public static final StructLayout IBV_SEND_WR = struct("ibv_send_wr",
            U64.withName("wr_id"), PTR.withName("next"), PTR.withName("sg_list"), INT.withName("num_sge"),
            INT.withName("opcode"), INT.withName("send_flags"),
            union(null, INT.withName("imm_data"), INT.withName("invalidate_rkey")),
            union(null, struct(null, U64.withName("remote_addr"), INT.withName("rkey")).withName("rdma"),
                    struct(null, U64.withName("remote_addr"), U64.withName("compare_add"), U64.withName("swap"),
                            INT.withName("rkey")).withName("atomic"),
                    struct(null, PTR.withName("ah"), INT.withName("remote_qpn"), INT.withName("remote_qkey"))
                            .withName("ud")).withName("wr"),
            union(null, struct(null, INT.withName("remote_srqn")).withName("xrc")).withName("qp_type"),
            union(null, struct(null, PTR.withName("mw"), INT.withName("rkey"),
                            struct(null, PTR.withName("mr"), U64.withName("addr"), U64.withName("length"),
                                    INT.withName("mw_access_flags")).withName("bind_info")).withName("bind_mw"),
                    struct(null, PTR.withName("hdr"), U16.withName("hdr_sz"), U16.withName("mss")).withName("tso")));

    public static final StructLayout IBV_RECV_WR = struct("ibv_recv_wr",
            U64.withName("wr_id"), PTR.withName("next"), PTR.withName("sg_list"), INT.withName("num_sge"));

    public static final StructLayout IBV_WC = struct("ibv_wc",
            U64.withName("wr_id"), INT.withName("status"), INT.withName("opcode"), INT.withName("vendor_err"),
            INT.withName("byte_len"), union(null, INT.withName("imm_data"), INT.withName("invalidated_rkey")),
            INT.withName("qp_num"), INT.withName("src_qp"), INT.withName("wc_flags"), U16.withName("pkey_index"),
            U16.withName("slid"), U8.withName("sl"), U8.withName("dlid_path_bits"));

    public static final StructLayout IBV_QP_CAP = struct("ibv_qp_cap",
            INT.withName("max_send_wr"), INT.withName("max_recv_wr"), INT.withName("max_send_sge"),
            INT.withName("max_recv_sge"), INT.withName("max_inline_data"));

    public static final StructLayout IBV_QP_INIT_ATTR = struct("ibv_qp_init_attr",
            PTR.withName("qp_context"), PTR.withName("send_cq"), PTR.withName("recv_cq"), PTR.withName("srq"),
            IBV_QP_CAP.withName("cap"), INT.withName("qp_type"), INT.withName("sq_sig_all"));

    public static final StructLayout IBV_GLOBAL_ROUTE = struct("ibv_global_route",
            gid("dgid"), INT.withName("flow_label"), U8.withName("sgid_index"), U8.withName("hop_limit"),
            U8.withName("traffic_class"));

    public static final StructLayout IBV_AH_ATTR = struct("ibv_ah_attr",
            IBV_GLOBAL_ROUTE.withName("grh"), U16.withName("dlid"), U8.withName("sl"), U8.withName("src_path_bits"),
            U8.withName("static_rate"), U8.withName("is_global"), U8.withName("port_num"));

    public static final StructLayout IBV_QP_ATTR = struct("ibv_qp_attr",
            INT.withName("qp_state"), INT.withName("cur_qp_state"), INT.withName("path_mtu"),
            INT.withName("path_mig_state"), INT.withName("qkey"), INT.withName("rq_psn"), INT.withName("sq_psn"),
            INT.withName("dest_qp_num"), INT.withName("qp_access_flags"), IBV_QP_CAP.withName("cap"),
            IBV_AH_ATTR.withName("ah_attr"), IBV_AH_ATTR.withName("alt_ah_attr"), U16.withName("pkey_index"),
            U16.withName("alt_pkey_index"), U8.withName("en_sqd_async_notify"), U8.withName("sq_draining"),
            U8.withName("max_rd_atomic"), U8.withName("max_dest_rd_atomic"), U8.withName("min_rnr_timer"),
            U8.withName("port_num"), U8.withName("timeout"), U8.withName("retry_cnt"), U8.withName("rnr_retry"),
            U8.withName("alt_port_num"), U8.withName("alt_timeout"), INT.withName("rate_limit"));

    public static final StructLayout IBV_SRQ_ATTR = struct("ibv_srq_attr",
            INT.withName("max_wr"), INT.withName("max_sge"), INT.withName("srq_limit"));

    public static final StructLayout IBV_SRQ_INIT_ATTR = struct("ibv_srq_init_attr",
            PTR.withName("srq_context"), IBV_SRQ_ATTR.withName("attr"));

    public static final StructLayout IBV_CQ = struct("ibv_cq",
            PTR.withName("context"), PTR.withName("channel"), PTR.withName("cq_context"), INT.withName("handle"),
            INT.withName("cqe"), DeviceLayouts.PTHREAD_MUTEX.withName("mutex"), PTHREAD_COND.withName("cond"), INT.withName("comp_events_completed"),
            INT.withName("async_events_completed"));

    public static final StructLayout IBV_QP = struct("ibv_qp",
            PTR.withName("context"), PTR.withName("qp_context"), PTR.withName("pd"), PTR.withName("send_cq"),
            PTR.withName("recv_cq"), PTR.withName("srq"), INT.withName("handle"), INT.withName("qp_num"),
            INT.withName("state"), INT.withName("qp_type"), DeviceLayouts.PTHREAD_MUTEX.withName("mutex"), PTHREAD_COND.withName("cond"),
            INT.withName("events_completed"));

    public static final StructLayout IBV_SRQ = struct("ibv_srq",
            PTR.withName("context"), PTR.withName("srq_context"), PTR.withName("pd"), INT.withName("handle"),
            DeviceLayouts.PTHREAD_MUTEX.withName("mutex"), PTHREAD_COND.withName("cond"), INT.withName("events_completed"));

    public static final StructLayout IBV_AH = struct("ibv_ah",
            PTR.withName("context"), PTR.withName("pd"), INT.withName("handle"));

    public static final StructLayout IBV_MW_BIND = struct("ibv_mw_bind",
            U64.withName("wr_id"), INT.withName("send_flags"), IBV_MW_BIND_INFO.withName("bind_info"));

    /** Every layout above, for the probe. */
    public static final List<StructLayout> ALL = List.of(IBV_SGE, IBV_MW_BIND_INFO, IBV_SEND_WR, IBV_RECV_WR,
            IBV_WC, IBV_QP_CAP, IBV_QP_INIT_ATTR, IBV_GLOBAL_ROUTE, IBV_AH_ATTR, IBV_QP_ATTR, IBV_SRQ_ATTR,
            IBV_SRQ_INIT_ATTR, IBV_CQ, IBV_QP, IBV_SRQ, IBV_AH, IBV_MW_BIND);

    // ibv_sge
    public static final long SGE_SIZE = IBV_SGE.byteSize();
    public static final long SGE_ADDR = offset(IBV_SGE, "addr");
    public static final long SGE_LENGTH = offset(IBV_SGE, "length");
    public static final long SGE_LKEY = offset(IBV_SGE, "lkey");

    // ibv_send_wr
    public static final long SEND_WR_SIZE = IBV_SEND_WR.byteSize();
    public static final long SWR_WR_ID = offset(IBV_SEND_WR, "wr_id");
    public static final long SWR_NEXT = offset(IBV_SEND_WR, "next");
    public static final long SWR_SG_LIST = offset(IBV_SEND_WR, "sg_list");
    public static final long SWR_NUM_SGE = offset(IBV_SEND_WR, "num_sge");
    public static final long SWR_OPCODE = offset(IBV_SEND_WR, "opcode");
    public static final long SWR_SEND_FLAGS = offset(IBV_SEND_WR, "send_flags");
    public static final long SWR_IMM_DATA = offset(IBV_SEND_WR, "imm_data");
    public static final long SWR_INVALIDATE_RKEY = offset(IBV_SEND_WR, "invalidate_rkey");
    public static final long SWR_RDMA_REMOTE_ADDR = offset(IBV_SEND_WR, "wr.rdma.remote_addr");
    public static final long SWR_RDMA_RKEY = offset(IBV_SEND_WR, "wr.rdma.rkey");
    public static final long SWR_ATOMIC_REMOTE_ADDR = offset(IBV_SEND_WR, "wr.atomic.remote_addr");
    public static final long SWR_ATOMIC_COMPARE_ADD = offset(IBV_SEND_WR, "wr.atomic.compare_add");
    public static final long SWR_ATOMIC_SWAP = offset(IBV_SEND_WR, "wr.atomic.swap");
    public static final long SWR_ATOMIC_RKEY = offset(IBV_SEND_WR, "wr.atomic.rkey");
    public static final long SWR_UD_AH = offset(IBV_SEND_WR, "wr.ud.ah");
    public static final long SWR_UD_REMOTE_QPN = offset(IBV_SEND_WR, "wr.ud.remote_qpn");
    public static final long SWR_UD_REMOTE_QKEY = offset(IBV_SEND_WR, "wr.ud.remote_qkey");
    public static final long SWR_BIND_MW_MW = offset(IBV_SEND_WR, "bind_mw.mw");
    public static final long SWR_BIND_MW_RKEY = offset(IBV_SEND_WR, "bind_mw.rkey");
    public static final long SWR_BIND_MW_MR = offset(IBV_SEND_WR, "bind_mw.bind_info.mr");
    public static final long SWR_BIND_MW_ADDR = offset(IBV_SEND_WR, "bind_mw.bind_info.addr");
    public static final long SWR_BIND_MW_LENGTH = offset(IBV_SEND_WR, "bind_mw.bind_info.length");
    public static final long SWR_BIND_MW_ACCESS = offset(IBV_SEND_WR, "bind_mw.bind_info.mw_access_flags");

    // ibv_recv_wr
    public static final long RECV_WR_SIZE = IBV_RECV_WR.byteSize();
    public static final long RWR_WR_ID = offset(IBV_RECV_WR, "wr_id");
    public static final long RWR_NEXT = offset(IBV_RECV_WR, "next");
    public static final long RWR_SG_LIST = offset(IBV_RECV_WR, "sg_list");
    public static final long RWR_NUM_SGE = offset(IBV_RECV_WR, "num_sge");

    // ibv_wc
    public static final long WC_SIZE = IBV_WC.byteSize();
    public static final long WC_WR_ID = offset(IBV_WC, "wr_id");
    public static final long WC_STATUS = offset(IBV_WC, "status");
    public static final long WC_OPCODE = offset(IBV_WC, "opcode");
    public static final long WC_VENDOR_ERR = offset(IBV_WC, "vendor_err");
    public static final long WC_BYTE_LEN = offset(IBV_WC, "byte_len");
    public static final long WC_IMM_DATA = offset(IBV_WC, "imm_data");
    public static final long WC_QP_NUM = offset(IBV_WC, "qp_num");
    public static final long WC_SRC_QP = offset(IBV_WC, "src_qp");
    public static final long WC_WC_FLAGS = offset(IBV_WC, "wc_flags");
    public static final long WC_PKEY_INDEX = offset(IBV_WC, "pkey_index");
    public static final long WC_SLID = offset(IBV_WC, "slid");
    public static final long WC_SL = offset(IBV_WC, "sl");
    public static final long WC_DLID_PATH_BITS = offset(IBV_WC, "dlid_path_bits");

    // ibv_cq, ibv_qp, ibv_srq
    public static final long CQ_CONTEXT = offset(IBV_CQ, "context");
    public static final long CQ_CQE = offset(IBV_CQ, "cqe");
    public static final long QP_CONTEXT = offset(IBV_QP, "context");
    public static final long QP_QP_NUM = offset(IBV_QP, "qp_num");
    public static final long QP_STATE = offset(IBV_QP, "state");
    public static final long SRQ_CONTEXT = offset(IBV_SRQ, "context");
}
