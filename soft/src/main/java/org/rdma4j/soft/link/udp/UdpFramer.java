// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Ipv4Header;
import org.rdma4j.soft.wire.Ipv6Header;
import org.rdma4j.soft.wire.UdpHeader;

/**
 * Writes the IP and UDP headers of a datagram from a link's address and port and computes the ICRC over
 * them and the BTH-onward bytes (into its place at the end): the one RoCE framer of the UDP link and, into
 * {@link #pseudo} for the ICRC only, of the shared-memory link. Not thread safe: one under the UDP link's
 * send lock, one per thread delivering to the link's own address ({@link SelfScratch}), one per shm peer.
 */
public final class UdpFramer {
    public final Icrc icrc = new Icrc();
    final Ipv4Header ip4 = new Ipv4Header();
    final Ipv6Header ip6 = new Ipv6Header();
    final UdpHeader udp = new UdpHeader();
    /** Where the headers go when they are only for the ICRC. */
    public final MemorySegment pseudo = Arena.ofAuto().allocate(64, 8);
    private final boolean v6;
    private final byte[] localBytes;
    private final int port;

    public UdpFramer(boolean v6, byte[] localBytes, int port) {
        this.v6 = v6;
        this.localBytes = localBytes;
        this.port = port;
    }

    public void frame(MemorySegment ipOut, byte[] dst, int dstPort, int tos, int ttl, int ipv4Id,
                      MemorySegment bthOnward, long bth, int bthLength) {
        int udpLength = UdpHeader.LENGTH + bthLength;
        MemorySegment ipSeg;
        if (v6) {
            ipSeg = ip6.wrap(ipOut, 0).writeUdp(tos, 0, udpLength, ttl).sourceAddress(localBytes, 0)
                    .destinationAddress(dst, 0).segment();
            udp.wrap(ipSeg, Ipv6Header.LENGTH).write(port, dstPort, udpLength, 0);
        } else {
            ipSeg = ip4.wrap(ipOut, 0).writeUdp(tos, Ipv4Header.LENGTH + udpLength, ipv4Id, true, ttl,
                    UdpDatagrams.toInt(localBytes), UdpDatagrams.toInt(dst)).segment(); // checksum set
            udp.wrap(ipSeg, Ipv4Header.LENGTH).write(port, dstPort, udpLength, 0);
        }
        int crc = icrc.compute(ipSeg, 0, bthOnward, bth, bthLength);
        Icrc.write(bthOnward, bth + bthLength - Icrc.LENGTH, crc);
    }

    /** One thread's scratch for a link's delivery to its own address. */
    static final class SelfScratch {
        final UdpFramer framer;
        final UdpDatagrams.Scratch receive = new UdpDatagrams.Scratch();
        /** The packet's source as a sockaddr, as the socket would report it. */
        final MemorySegment source = Arena.ofAuto().allocate(LinuxSockets.SOCKADDR_SIZE, 8);

        SelfScratch(boolean v6, byte[] localBytes, int port) {
            framer = new UdpFramer(v6, localBytes, port);
        }
    }
}
