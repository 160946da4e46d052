// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.PortState;
import org.rdma4j.verbs.LinkLayer;

/** The soft device's limits, close to Linux rxe's so programs tuned for it behave alike. */
final class SoftLimits {
    static final int VENDOR_ID = 0xFFFFFF; // rxe reports this "no vendor" id as well
    static final int VENDOR_PART_ID = 0x0A4A; // "rdma4j"
    /** Far above rxe's 0x10000: the engine holds 256 Ki idle QPs (see docs/PERFORMANCE.md, "Scale of one device"). */
    static final int MAX_QP = org.rdma4j.soft.engine.Hca.MAX_QP;
    static final int MAX_QP_WR = 0x4000;
    static final int MAX_SGE = 32;
    static final int MAX_CQ = 0x4000;
    static final int MAX_CQE = (1 << 15) - 1;
    static final int MAX_MR = 0x40000;
    static final int MAX_PD = 0x7FFC;
    static final int MAX_QP_RD_ATOM = 128;
    static final int MAX_RES_RD_ATOM = 0x3F000;
    static final int MAX_MW = 0x40000;
    static final int MAX_AH = 0x3FFF;
    static final int MAX_SRQ = 0x3FFFF;
    static final int MAX_SRQ_WR = 0x4000;
    static final int MAX_SRQ_SGE = 27;
    /**
     * Multicast: far below rxe's 8192 groups / 56 QPs per group / 0x70000 attachments. Over UDP every
     * group the device joins is a socket of its own, and small limits keep "one past the limit" testable.
     */
    static final int MAX_MCAST_GRP = 32;
    static final int MAX_MCAST_QP_ATTACH = 16;
    static final int MAX_TOTAL_MCAST_QP_ATTACH = 64;
    static final int MAX_PKEYS = 1;
    static final int MAX_INLINE = 512;
    static final int NUM_COMP_VECTORS = 1;
    static final int GID_TABLE_LEN = 16;
    static final long PAGE_SIZE_CAP = 0xFFFFF000L;
    /** IB_DEVICE_MEM_WINDOW | MEM_WINDOW_TYPE_2B | RC_RNR_NAK_GEN | SRQ_RESIZE | ... (informational). */
    static final int DEVICE_CAP_FLAGS = 0x00021C76;

    private SoftLimits() {}

    static DeviceAttr deviceAttr(long guid, ResourceLimits l) {
        return new DeviceAttr("0.1.0", guid, guid, Long.MAX_VALUE, PAGE_SIZE_CAP, VENDOR_ID, VENDOR_PART_ID, 1,
                l.maxQp(), MAX_QP_WR, DEVICE_CAP_FLAGS, MAX_SGE, MAX_SGE, l.maxCq(), MAX_CQE, l.maxMr(), l.maxPd(),
                MAX_QP_RD_ATOM, 0, MAX_RES_RD_ATOM, MAX_QP_RD_ATOM, 0, DeviceAttr.AtomicCap.ATOMIC_HCA, 0, 0,
                l.maxMw(), 0, 0, MAX_MCAST_GRP, MAX_MCAST_QP_ATTACH, MAX_TOTAL_MCAST_QP_ATTACH, l.maxAh(), 0, 0,
                l.maxSrq(), MAX_SRQ_WR, MAX_SRQ_SGE, MAX_PKEYS, 15, 1,
                MAX_INLINE, NUM_COMP_VECTORS);
    }

    /** Port 1; a port that is down reports phys_state POLLING (2), as rxe does when its netdev lost carrier. */
    static PortAttr portAttr(boolean up) {
        return new PortAttr(up ? PortState.ACTIVE : PortState.DOWN, Mtu.MTU_4096, Mtu.MTU_4096, GID_TABLE_LEN,
                0x00010000, 0x80000000L, 0, 0, MAX_PKEYS, 0, 0, 0, 1, 0, 0, 0, 2, 32, up ? 5 : 2, LinkLayer.ETHERNET);
    }
}
