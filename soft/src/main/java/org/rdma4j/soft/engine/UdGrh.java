// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Ipv4Header;
import org.rdma4j.soft.wire.Ipv6Header;
import org.rdma4j.soft.wire.UdpHeader;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.NetworkHeaderType;

/**
 * The 40-byte GRH area in front of every UD receive, written as rxe writes it: the packet's network
 * header as it was on the wire, built with the {@link Ipv4Header} / {@link Ipv6Header} flyweights.
 * IPv4: the 20-byte IPv4 header in the area's last 20 bytes (the first 20 are zero); IPv6: the 40-byte
 * IPv6 header. Lengths count the UDP header, BTH onward, pad and ICRC. One per QP; runs only inside
 * the QP task.
 */
final class UdGrh {
    /** Bytes of GRH in front of a UD receive. */
    static final int BYTES = 40;

    private final MemorySegment area = Arena.ofAuto().allocate(BYTES, 8);
    private final Ipv4Header ip4 = new Ipv4Header();
    private final Ipv6Header ip6 = new Ipv6Header();

    /** The area as last written. */
    MemorySegment area() {
        return area;
    }

    /** Writes the area for {@code p}, which carries {@code payload} bytes; returns which header it holds. */
    NetworkHeaderType write(Packet p, int payload) {
        Gid src = p.srcGid;
        Gid dst = p.dstGid;
        int udpLength = UdpHeader.LENGTH + p.headerLength + payload + ((4 - (payload & 3)) & 3) + Icrc.LENGTH;
        area.fill((byte) 0);
        if (src != null && dst != null && src.isIpv4Mapped()) {
            ip4.wrap(area, BYTES - Ipv4Header.LENGTH).writeUdp(p.trafficClass, Ipv4Header.LENGTH + udpLength, 0,
                    true, p.hopLimit, (int) addressBits(src, 8), (int) addressBits(dst, 8));
            return NetworkHeaderType.IPV4;
        }
        ip6.wrap(area, 0).writeUdp(p.trafficClass, p.flowLabel, udpLength, p.hopLimit)
                .sourceAddress(addressBits(src, 0), addressBits(src, 8))
                .destinationAddress(addressBits(dst, 0), addressBits(dst, 8));
        return NetworkHeaderType.IPV6;
    }

    /**
     * Eight bytes of a GID from {@code from} as a network-order long (0 for no GID), allocation free;
     * the low 32 bits of the second half are an IPv4-mapped GID's address.
     */
    private static long addressBits(Gid g, int from) {
        long v = 0;
        for (int i = from; i < from + 8; i++) {
            v = v << 8 | (g == null ? 0 : g.byteAt(i) & 0xFF);
        }
        return v;
    }
}
