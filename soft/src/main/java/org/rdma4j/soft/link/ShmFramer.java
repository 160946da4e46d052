// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Ipv4Header;
import org.rdma4j.soft.wire.Ipv6Header;
import org.rdma4j.soft.wire.UdpHeader;

/**
 * Writes the IP and UDP headers a datagram from a shared-memory link's device to a destination would
 * carry (only for the ICRC) and the ICRC into its place at the end of the BTH-onward bytes in a ring.
 * One per peer, used under its lock (not thread safe).
 */
final class ShmFramer {
    final Icrc icrc = new Icrc();
    private final Ipv4Header ip4 = new Ipv4Header();
    private final Ipv6Header ip6 = new Ipv6Header();
    private final UdpHeader udpHeader = new UdpHeader();
    private final MemorySegment pseudo = Arena.ofAuto().allocate(64, 8);
    private final boolean v6;
    private final byte[] localBytes;
    private final int port;
    private final int remotePort;

    ShmFramer(boolean v6, byte[] localBytes, int port, int remotePort) {
        this.v6 = v6;
        this.localBytes = localBytes;
        this.port = port;
        this.remotePort = remotePort;
    }

    void frame(byte[] dst, int tos, int ttl, MemorySegment bthOnward, long bth, int bthLength) {
        int udpLength = UdpHeader.LENGTH + bthLength;
        MemorySegment ipSeg;
        if (v6) {
            ipSeg = ip6.wrap(pseudo, 0).writeUdp(tos, 0, udpLength, ttl).sourceAddress(localBytes, 0)
                    .destinationAddress(dst, 0).segment();
            udpHeader.wrap(ipSeg, Ipv6Header.LENGTH).write(port, remotePort, udpLength, 0);
        } else {
            ipSeg = ip4.wrap(pseudo, 0).writeUdp(tos, Ipv4Header.LENGTH + udpLength, 0, true, ttl,
                    UdpDatagrams.toInt(localBytes), UdpDatagrams.toInt(dst)).segment();
            udpHeader.wrap(ipSeg, Ipv4Header.LENGTH).write(port, remotePort, udpLength, 0);
        }
        int crc = icrc.compute(ipSeg, 0, bthOnward, bth, bthLength);
        Icrc.write(bthOnward, bth + bthLength - Icrc.LENGTH, crc);
    }
}
