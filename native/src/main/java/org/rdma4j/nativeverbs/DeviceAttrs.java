// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.PortAttr;

/** Reads ibv_device_attr, ibv_port_attr and ibv_gid_entry into the API's records. */
final class DeviceAttrs {
    private DeviceAttrs() {}

    private static final StructLayout D = DeviceLayouts.ibv_device_attr;
    private static final StructLayout P = DeviceLayouts.ibv_port_attr;

    private static int i(MemorySegment s, StructLayout l, String name) {
        return s.get(ValueLayout.JAVA_INT, offset(l, name));
    }

    private static long l(MemorySegment s, StructLayout l, String name) {
        return s.get(ValueLayout.JAVA_LONG, offset(l, name));
    }

    private static int u8(MemorySegment s, StructLayout l, String name) {
        return s.get(ValueLayout.JAVA_BYTE, offset(l, name)) & 0xff;
    }

    private static int u16(MemorySegment s, StructLayout l, String name) {
        return s.get(ValueLayout.JAVA_SHORT, offset(l, name)) & 0xffff;
    }

    static DeviceAttr read(MemorySegment a, int numCompVectors) {
        String fw = a.asSlice(offset(D, "fw_ver"), 64).getString(0);
        DeviceAttr.AtomicCap[] caps = DeviceAttr.AtomicCap.values();
        int cap = i(a, D, "atomic_cap");
        return new DeviceAttr(fw,
                Long.reverseBytes(l(a, D, "node_guid")), Long.reverseBytes(l(a, D, "sys_image_guid")),
                l(a, D, "max_mr_size"), l(a, D, "page_size_cap"), i(a, D, "vendor_id"), i(a, D, "vendor_part_id"),
                i(a, D, "hw_ver"), i(a, D, "max_qp"), i(a, D, "max_qp_wr"), i(a, D, "device_cap_flags"),
                i(a, D, "max_sge"), i(a, D, "max_sge_rd"), i(a, D, "max_cq"), i(a, D, "max_cqe"),
                i(a, D, "max_mr"), i(a, D, "max_pd"), i(a, D, "max_qp_rd_atom"), i(a, D, "max_ee_rd_atom"),
                i(a, D, "max_res_rd_atom"), i(a, D, "max_qp_init_rd_atom"), i(a, D, "max_ee_init_rd_atom"),
                cap >= 0 && cap < caps.length ? caps[cap] : DeviceAttr.AtomicCap.ATOMIC_NONE,
                i(a, D, "max_ee"), i(a, D, "max_rdd"), i(a, D, "max_mw"), i(a, D, "max_raw_ipv6_qp"),
                i(a, D, "max_raw_ethy_qp"), i(a, D, "max_mcast_grp"), i(a, D, "max_mcast_qp_attach"),
                i(a, D, "max_total_mcast_qp_attach"), i(a, D, "max_ah"), i(a, D, "max_fmr"),
                i(a, D, "max_map_per_fmr"), i(a, D, "max_srq"), i(a, D, "max_srq_wr"), i(a, D, "max_srq_sge"),
                u16(a, D, "max_pkeys"), u8(a, D, "local_ca_ack_delay"), u8(a, D, "phys_port_cnt"),
                0 /* max_inline_data: not in ibv_device_attr */, numCompVectors);
    }

    static PortAttr readPort(MemorySegment a) {
        return new PortAttr(NativeContext.portState(i(a, P, "state")), NativeContext.mtu(i(a, P, "max_mtu")),
                NativeContext.mtu(i(a, P, "active_mtu")), i(a, P, "gid_tbl_len"), i(a, P, "port_cap_flags"),
                Integer.toUnsignedLong(i(a, P, "max_msg_sz")), i(a, P, "bad_pkey_cntr"), i(a, P, "qkey_viol_cntr"),
                u16(a, P, "pkey_tbl_len"), u16(a, P, "lid"), u16(a, P, "sm_lid"), u8(a, P, "lmc"),
                u8(a, P, "max_vl_num"), u8(a, P, "sm_sl"), u8(a, P, "subnet_timeout"), u8(a, P, "init_type_reply"),
                u8(a, P, "active_width"), u8(a, P, "active_speed"), u8(a, P, "phys_state"),
                NativeContext.linkLayer(u8(a, P, "link_layer")));
    }

    static GidEntry readGidEntry(MemorySegment e) {
        StructLayout g = DeviceLayouts.ibv_gid_entry;
        byte[] raw = e.asSlice(offset(g, "gid"), Gid.LENGTH).toArray(ValueLayout.JAVA_BYTE);
        int type = i(e, g, "gid_type");
        GidEntry.GidType[] types = GidEntry.GidType.values();
        return new GidEntry(i(e, g, "gid_index"), i(e, g, "port_num"), Gid.of(raw),
                type >= 0 && type < types.length ? types[type] : GidEntry.GidType.IB);
    }
}
