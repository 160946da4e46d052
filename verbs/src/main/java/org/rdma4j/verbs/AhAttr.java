// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * An address vector ({@code struct ibv_ah_attr}). On RoCE ({@link LinkLayer#ETHERNET}) a
 * {@link GlobalRoute} is required: without one, creating an address handle or moving a connected
 * QP to RTR fails with EINVAL (S-DEV-4).
 *
 * @param grh         {@code grh} with {@code is_global}: the global route, or null for a LID-only route
 * @param dlid        {@code dlid}: the destination LID (InfiniBand; 0 on RoCE)
 * @param sl          {@code sl}: the service level
 * @param srcPathBits {@code src_path_bits}: the source LID path bits
 * @param staticRate  {@code static_rate}: an {@code IBV_RATE_*} value, 0 for the port's rate
 * @param portNum     {@code port_num}: the local port, from 1
 */
public record AhAttr(GlobalRoute grh, int dlid, int sl, int srcPathBits, int staticRate, int portNum) {
    /** {@return whether a GRH is present ({@code is_global})} */
    public boolean isGlobal() {
        return grh != null;
    }

    /**
     * A RoCE address vector to {@code dgid} through port 1, local GID index {@code sgidIndex}, with the
     * defaults of {@link GlobalRoute#to}.
     *
     * @param dgid      the destination GID
     * @param sgidIndex the local GID index
     * @return the address vector
     */
    public static AhAttr roce(Gid dgid, int sgidIndex) {
        return new AhAttr(GlobalRoute.to(dgid, sgidIndex), 0, 0, 0, 0, 1);
    }

    /**
     * {@code ibv_init_ah_from_wc}: the address vector that answers the sender of a UD receive, from its
     * work completion and the 40-byte GRH area ({@code grh}) it was received with. As rdma-core does it:
     * the layout is read from the header itself (IPv6 version nibble; else an IPv4 header with a valid
     * checksum in the last 20 bytes); {@code dgid} is the packet's source, {@code sgid_index} the
     * local GID (of the matching RoCE type) equal to the packet's destination, hop limit and traffic
     * class are the packet's TTL/hop limit and TOS/traffic class, and the flow label is read from the
     * first word. Without {@link WcFlag#GRH} the result is not global (and then fails to make an AH
     * on RoCE). Errors: EINVAL when the packet went to a multicast group (no local GID to answer from)
     * or {@code grh} is shorter than 40 bytes; EPROTONOSUPPORT for a header that is neither; the GID
     * query's error (ENODATA at the first empty entry, EINVAL for a bad port) when no local GID matches.
     *
     * @param context the context whose GID table is searched
     * @param portNum the port the datagram arrived on
     * @param wc      the receive's completion
     * @param grh     the first 40 bytes of the receive buffer (read only with {@link WcFlag#GRH})
     * @return the address vector back to the sender
     * @throws VerbsException as described
     */
    public static AhAttr fromWc(Context context, int portNum, WorkCompletion wc, MemorySegment grh) {
        if ((wc.wcFlags() & WcFlag.GRH) == 0) {
            return new AhAttr(null, wc.slid(), wc.sl(), wc.dlidPathBits(), 0, portNum);
        }
        if (grh == null || grh.byteSize() < 40) {
            throw new VerbsException(Errno.EINVAL, "the GRH area must have 40 bytes");
        }
        int versionClassFlow = grh.get(BE_INT, 0);
        int flowLabel = versionClassFlow & 0xFFFFF;
        GlobalRoute route;
        if (grhVersion(grh) == 4) {
            byte[] dst = new byte[16];
            byte[] src = new byte[16];
            dst[10] = src[10] = (byte) 0xFF;
            dst[11] = src[11] = (byte) 0xFF;
            MemorySegment.copy(grh, ValueLayout.JAVA_BYTE, 20 + 16, dst, 12, 4);
            MemorySegment.copy(grh, ValueLayout.JAVA_BYTE, 20 + 12, src, 12, 4);
            if ((dst[12] & 0xF0) == 0xE0) {
                throw new VerbsException(Errno.EINVAL, "the datagram was sent to a multicast group");
            }
            int index = gidIndex(context, portNum, Gid.of(dst), GidEntry.GidType.ROCE_V2);
            route = new GlobalRoute(Gid.of(src), flowLabel, index, grh.get(ValueLayout.JAVA_BYTE, 20 + 8) & 0xFF,
                    grh.get(ValueLayout.JAVA_BYTE, 20 + 1) & 0xFF);
        } else {
            byte[] dst = new byte[16];
            byte[] src = new byte[16];
            MemorySegment.copy(grh, ValueLayout.JAVA_BYTE, 24, dst, 0, 16);
            MemorySegment.copy(grh, ValueLayout.JAVA_BYTE, 8, src, 0, 16);
            if (dst[0] == (byte) 0xFF) {
                throw new VerbsException(Errno.EINVAL, "the datagram was sent to a multicast group");
            }
            int next = grh.get(ValueLayout.JAVA_BYTE, 6) & 0xFF;
            GidEntry.GidType type = switch (next) {
                case 17 -> GidEntry.GidType.ROCE_V2;
                case 0x1B -> GidEntry.GidType.ROCE_V1;
                default -> throw new VerbsException(Errno.EPROTONOSUPPORT, "next header " + next
                        + " is neither UDP (RoCE v2) nor BTH (RoCE v1)");
            };
            int index = gidIndex(context, portNum, Gid.of(dst), type);
            route = new GlobalRoute(Gid.of(src), flowLabel, index, grh.get(ValueLayout.JAVA_BYTE, 7) & 0xFF,
                    (versionClassFlow >>> 20) & 0xFF);
        }
        return new AhAttr(route, wc.slid(), wc.sl(), wc.dlidPathBits(), 0, portNum);
    }

    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** 4 or 6, as rdma-core's get_grh_header_version decides it. */
    private static int grhVersion(MemorySegment grh) {
        int v6 = (grh.get(ValueLayout.JAVA_BYTE, 0) >>> 4) & 0xF;
        int versionIhl = grh.get(ValueLayout.JAVA_BYTE, 20) & 0xFF;
        if (v6 != 6) {
            if (versionIhl >>> 4 == 4) {
                return 4;
            }
            throw new VerbsException(Errno.EPROTONOSUPPORT, "the GRH area holds neither an IPv6 nor an IPv4 header");
        }
        if ((versionIhl & 0xF) != 5) {
            return 6;
        }
        // Both could be: believe IPv4 if its header checksum is right.
        long sum = 0;
        for (int i = 0; i < 20; i += 2) {
            sum += grh.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 20 + i) & 0xFFFF;
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return sum == 0xFFFF ? 4 : 6;
    }

    /** The first GID table index holding {@code gid} with {@code type}; the query's error ends the search. */
    private static int gidIndex(Context context, int portNum, Gid gid, GidEntry.GidType type) {
        for (int i = 0; ; i++) {
            GidEntry e = context.queryGidEntry(portNum, i);
            if (e.gid().equals(gid) && e.type() == type) {
                return i;
            }
        }
    }
}
