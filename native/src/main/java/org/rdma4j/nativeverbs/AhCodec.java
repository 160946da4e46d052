// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_AH_ATTR;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.VerbsException;

/** {@link AhAttr} to and from {@code struct ibv_ah_attr} (in an AH, or in a QP's path). Stateless. */
final class AhCodec {
    private static final long DGID = offset(IBV_AH_ATTR, "grh.dgid");
    private static final long FLOW_LABEL = offset(IBV_AH_ATTR, "grh.flow_label");
    private static final long SGID_INDEX = offset(IBV_AH_ATTR, "grh.sgid_index");
    private static final long HOP_LIMIT = offset(IBV_AH_ATTR, "grh.hop_limit");
    private static final long TRAFFIC_CLASS = offset(IBV_AH_ATTR, "grh.traffic_class");
    private static final long DLID = offset(IBV_AH_ATTR, "dlid");
    private static final long SL = offset(IBV_AH_ATTR, "sl");
    private static final long SRC_PATH_BITS = offset(IBV_AH_ATTR, "src_path_bits");
    private static final long STATIC_RATE = offset(IBV_AH_ATTR, "static_rate");
    private static final long IS_GLOBAL = offset(IBV_AH_ATTR, "is_global");
    private static final long PORT_NUM = offset(IBV_AH_ATTR, "port_num");

    private AhCodec() {}

    /** Writes {@code ah} at {@code at} of {@code m}. */
    static void encode(MemorySegment m, long at, AhAttr ah) {
        if (ah == null) {
            throw new VerbsException(Errno.EINVAL, "no address vector (ah_attr)");
        }
        GlobalRoute g = ah.grh();
        if (g != null) {
            MemorySegment.copy(g.dgid().bytes(), 0, m, ValueLayout.JAVA_BYTE, at + DGID, Gid.LENGTH);
            m.set(ValueLayout.JAVA_INT, at + FLOW_LABEL, g.flowLabel());
            m.set(ValueLayout.JAVA_BYTE, at + SGID_INDEX, (byte) g.sgidIndex());
            m.set(ValueLayout.JAVA_BYTE, at + HOP_LIMIT, (byte) g.hopLimit());
            m.set(ValueLayout.JAVA_BYTE, at + TRAFFIC_CLASS, (byte) g.trafficClass());
        }
        m.set(ValueLayout.JAVA_SHORT, at + DLID, (short) ah.dlid());
        m.set(ValueLayout.JAVA_BYTE, at + SL, (byte) ah.sl());
        m.set(ValueLayout.JAVA_BYTE, at + SRC_PATH_BITS, (byte) ah.srcPathBits());
        m.set(ValueLayout.JAVA_BYTE, at + STATIC_RATE, (byte) ah.staticRate());
        m.set(ValueLayout.JAVA_BYTE, at + IS_GLOBAL, (byte) (g != null ? 1 : 0));
        m.set(ValueLayout.JAVA_BYTE, at + PORT_NUM, (byte) ah.portNum());
    }

    /** Reads the {@code ibv_ah_attr} at {@code at}; null when it is empty (never set: not global, LID 0, port 0). */
    static AhAttr decode(MemorySegment m, long at) {
        boolean global = m.get(ValueLayout.JAVA_BYTE, at + IS_GLOBAL) != 0;
        int dlid = m.get(ValueLayout.JAVA_SHORT, at + DLID) & 0xFFFF;
        int port = m.get(ValueLayout.JAVA_BYTE, at + PORT_NUM) & 0xFF;
        if (!global && dlid == 0 && port == 0) {
            return null;
        }
        GlobalRoute g = null;
        if (global) {
            byte[] gid = new byte[Gid.LENGTH];
            MemorySegment.copy(m, ValueLayout.JAVA_BYTE, at + DGID, gid, 0, Gid.LENGTH);
            g = new GlobalRoute(Gid.of(gid), m.get(ValueLayout.JAVA_INT, at + FLOW_LABEL),
                    m.get(ValueLayout.JAVA_BYTE, at + SGID_INDEX) & 0xFF, m.get(ValueLayout.JAVA_BYTE, at + HOP_LIMIT) & 0xFF,
                    m.get(ValueLayout.JAVA_BYTE, at + TRAFFIC_CLASS) & 0xFF);
        }
        return new AhAttr(g, dlid, m.get(ValueLayout.JAVA_BYTE, at + SL) & 0xFF,
                m.get(ValueLayout.JAVA_BYTE, at + SRC_PATH_BITS) & 0xFF, m.get(ValueLayout.JAVA_BYTE, at + STATIC_RATE) & 0xFF,
                port);
    }
}
