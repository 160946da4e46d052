// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.util.HashMap;
import java.util.Map;

/**
 * The device families perftest recognises from ibv_query_device's vendor_id and vendor_part_id
 * (its ib_dev_name), reduced to what the inline choice needs. A device perftest does not know
 * (rxe: vendor 0xFFFFFF, part 0; siw: vendor 0x626d74, part 0; rdma4j's soft device) is {@link #UNKNOWN}:
 * perftest disables inline data on it.
 */
enum DeviceKind {
    /** Not recognised, or ibv_query_device failed: no inline data. */
    UNKNOWN(0, 0),
    CHELSIO(-1, -1), INTEL_GEN1(48, 48), INTEL_GEN2(101, 101), TCU1(-1, -1),
    YUNSILICON_ANDES(32, 32), YUNSILICON_DIAMOND(64, 64), NBL_LEONIS(32, 0), NBL_RNIC(465, 434),
    PENSANDO(-1, -1), MELLANOX(-1, -1), SKYHAWK(-1, -1), QLOGIC_E4(128, 128), QLOGIC_AH(-1, -1),
    NETXTREME(96, 96), EFA(32, 32), ERDMA(96, 96), HNS(32, 32);

    static final int VENDOR_CHELSIO = 0x1425;
    static final int VENDOR_INTEL = 0x8086;
    static final int VENDOR_TCU = 0x209b;
    static final int VENDOR_YUNSILICON = 0x1f67;
    static final int VENDOR_NBL = 0x1f0f;
    static final int VENDOR_PENSANDO = 0x1dd8;

    /** Any other vendor_id: the family is looked up by vendor_part_id alone, as perftest does. */
    private static final Map<Integer, DeviceKind> BY_PART = new HashMap<>();

    static {
        parts(MELLANOX, 4099, 4100, 4103, 4104, 4113, 4129, 4131, 4133, 4135,
                41682, 41683, 41686, 41692, 41695,
                26418, 26428, 26438, 26448, 26458, 26468, 26478, 25408, 25418, 25428, 25448);
        range(MELLANOX, 4115, 4127);
        parts(SKYHAWK, 1824);
        parts(QLOGIC_E4, 5684, 5700, 5716, 5718, 5734);
        parts(QLOGIC_AH, 32880, 32881, 32882, 32883, 32912, 33136, 33168);
        parts(NETXTREME, 5638, 5652, 5824, 5825, 5827, 5839, 5846, 5847, 5848, 5849, 5855, 5858, 5859,
                5861, 5867, 5869, 5871, 5872, 5873, 5968, 5984, 6169, 55296, 55298, 55300);
        range(EFA, 61344, 61348);
        parts(ERDMA, 4223);
        range(HNS, 41506, 41510);
        parts(HNS, 41512, 41519);
    }

    /** The latency tests' inline size on RC/UC and on UD; -1: the verb's default. */
    private final int rcUcInline;
    private final int udInline;

    DeviceKind(int rcUcInline, int udInline) {
        this.rcUcInline = rcUcInline;
        this.udInline = udInline;
    }

    private static void parts(DeviceKind kind, int... ids) {
        for (int id : ids) {
            BY_PART.put(id, kind);
        }
    }

    private static void range(DeviceKind kind, int first, int last) {
        for (int id = first; id <= last; id++) {
            BY_PART.put(id, kind);
        }
    }

    /** The family of a device with this vendor_id and vendor_part_id. */
    static DeviceKind of(int vendorId, int vendorPartId) {
        return switch (vendorId) {
            case VENDOR_CHELSIO -> switch (vendorPartId >>> 12) {
                case 4, 5, 6, 10, 11 -> CHELSIO;
                default -> UNKNOWN;
            };
            case VENDOR_INTEL -> vendorPartId == 14289 ? INTEL_GEN1 : INTEL_GEN2;
            case VENDOR_TCU -> vendorPartId == 0x1000 ? TCU1 : UNKNOWN;
            case VENDOR_YUNSILICON -> vendorPartId == 0x1021 || vendorPartId == 0x1023 ? YUNSILICON_DIAMOND
                    : YUNSILICON_ANDES;
            case VENDOR_NBL -> nbl(vendorPartId);
            case VENDOR_PENSANDO -> PENSANDO;
            default -> BY_PART.getOrDefault(vendorPartId, UNKNOWN);
        };
    }

    /** NBL's DF200, Draco and RNIC400 parts; any other NBL part is a Leonis. */
    private static DeviceKind nbl(int part) {
        boolean rnic = part == 0x1047 || part == 0x1226 || part == 0x1227 || part == 0x1610
                || (part >= 0x3500 && part <= 0x350A);
        return rnic ? NBL_RNIC : NBL_LEONIS;
    }

    /**
     * The inline size of a latency test that gave no -I on this (known) device: the device's own size,
     * or else the verb's default (220 for WRITE, 236 for SEND on RC/UC, 188 on UD, 0 for READ/ATOMIC).
     */
    int latencyInline(Verb verb, Connection connection) {
        int own = connection == Connection.UD ? udInline : rcUcInline;
        if (own >= 0) {
            return own;
        }
        return switch (verb) {
            case WRITE -> PerfParams.DEF_INLINE_WRITE;
            case SEND -> connection == Connection.UD ? PerfParams.DEF_INLINE_SEND_UD
                    : PerfParams.DEF_INLINE_SEND_RC_UC;
            default -> 0;
        };
    }
}
