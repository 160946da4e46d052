// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.wire.Ipv4Header;

/**
 * {@link UdpLink.Mode#RAW_IPV4}: receives like {@link NativeUdpSocket}, but sends on a raw socket whose
 * IP header the link writes itself (DF, a fixed Identification), so the ICRC, which covers that header,
 * is right: interoperates with rxe over IPv4. Needs CAP_NET_RAW.
 */
final class RawIpv4UdpSocket extends NativeUdpSocket {
    private final int rawFd;
    private final MemorySegment rawAddr = Arena.ofAuto().allocate(LinuxSockets.SOCKADDR_SIZE, 8);

    RawIpv4UdpSocket(byte[] local, int port, int interfaceIndex, PacketPool pool) throws IOException {
        super(local, port, false, interfaceIndex, pool);
        try {
            rawFd = LinuxSockets.socket(sendCall, LinuxSockets.AF_INET, LinuxSockets.SOCK_RAW, LinuxSockets.IPPROTO_RAW);
        } catch (IOException e) {
            super.close();
            throw e;
        }
        sendMulticastFrom(sendCall, rawFd, false, local, interfaceIndex);
    }

    @Override
    public int ipHeaderLength() {
        return Ipv4Header.LENGTH;
    }

    /** The link writes TTL and TOS into its own IP header. */
    @Override
    public void setHopLimitAndClass(boolean multicast, int ttl, int tos) {
    }

    @Override
    public long send(MemorySegment ipPacket, int length, byte[] destination, int destinationPort) {
        int salen = LinuxSockets.writeSockaddr(rawAddr, destination, 0);
        return LinuxSockets.sendto(sendCall, rawFd, ipPacket, length, rawAddr, salen);
    }

    @Override
    int sendFd() {
        return rawFd;
    }

    @Override
    int sockaddrPort(int destinationPort) {
        return 0;
    }

    /** A raw socket has no UDP segmentation offload: one datagram per message. */
    @Override
    boolean segmentationOffload() {
        return false;
    }

    @Override
    public void close() {
        super.close();
        LinuxSockets.close(rawFd);
    }
}
