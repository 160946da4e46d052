// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;

/**
 * {@link UdpLink.Mode#CHANNEL}: a {@code DatagramChannel}; works anywhere Java does, between rdma4j
 * peers (it cannot accept IPv6 datagrams with a zero UDP checksum, and cannot set a unicast TTL: there
 * the kernel default applies). Receives one datagram at a time. Thread safety as {@link UdpSocket} says.
 */
final class ChannelUdpSocket implements UdpSocket {
    private final DatagramChannel channel;
    private final int receiveBufferBytes;
    private final PacketPool pool;
    private MemorySegment sendSource;
    private ByteBuffer sendView;
    private int socketMulticastTtl = -1;
    private int socketTos = -1;

    // Receive thread only.
    private final ByteBuffer receiveBuffer = ByteBuffer.allocateDirect(Packet.BUFFER_SIZE);
    private final MemorySegment receiveView = MemorySegment.ofBuffer(receiveBuffer);
    private final MemorySegment name = Arena.ofAuto().allocate(LinuxSockets.SOCKADDR_SIZE, 8);

    ChannelUdpSocket(InetAddress local, int port, boolean v6, PacketPool pool) throws IOException {
        this.pool = pool;
        channel = DatagramChannel.open(v6 ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET);
        try {
            channel.setOption(StandardSocketOptions.SO_RCVBUF, NativeUdpSocket.SOCKET_BUFFER);
            channel.setOption(StandardSocketOptions.SO_SNDBUF, NativeUdpSocket.SOCKET_BUFFER);
            receiveBufferBytes = channel.getOption(StandardSocketOptions.SO_RCVBUF);
            channel.bind(new InetSocketAddress(local, port));
        } catch (IOException e) {
            channel.close();
            throw e;
        }
    }

    @Override
    public int receiveBufferBytes() {
        return receiveBufferBytes;
    }

    @Override
    public void setHopLimitAndClass(boolean multicast, int ttl, int tos) {
        try {
            if (tos != socketTos) {
                channel.setOption(StandardSocketOptions.IP_TOS, tos);
                socketTos = tos;
            }
            if (multicast && ttl != socketMulticastTtl) {
                channel.setOption(StandardSocketOptions.IP_MULTICAST_TTL, ttl);
                socketMulticastTtl = ttl;
            }
        } catch (IOException | UnsupportedOperationException e) {
            // keep the socket's values
        }
    }

    @Override
    public long send(MemorySegment datagram, int length, byte[] destination, int destinationPort) {
        if (datagram != sendSource) { // the link sends from one buffer: one view, made once
            sendSource = datagram;
            sendView = datagram.asByteBuffer();
        }
        try {
            sendView.clear().limit(length);
            return channel.send(sendView, new InetSocketAddress(InetAddress.getByAddress(destination), destinationPort));
        } catch (IOException e) {
            return -1;
        }
    }

    @Override
    public int receive(UdpDatagrams datagrams, UdpDatagrams.Scratch scratch) {
        receiveBuffer.clear();
        InetSocketAddress from;
        try {
            from = (InetSocketAddress) channel.receive(receiveBuffer);
        } catch (ClosedChannelException e) {
            return 0;
        } catch (IOException e) {
            datagrams.malformed.incrementAndGet();
            return 0;
        }
        if (from == null) {
            return 0;
        }
        int len = receiveBuffer.position();
        Packet p = pool.acquire();
        MemorySegment.copy(receiveView, 0, p.buffer, 0, Math.min(len, Packet.BUFFER_SIZE));
        LinuxSockets.writeSockaddr(name, from.getAddress().getAddress(), from.getPort());
        datagrams.deliver(p, len, len > Packet.BUFFER_SIZE, name, 0, scratch);
        datagrams.endBatch();
        return 1;
    }

    @Override
    public long socketDrops() {
        return 0; // a DatagramChannel cannot tell
    }

    @Override
    public void interruptReceive() {
        try {
            channel.close(); // ends a blocked receive
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        interruptReceive();
    }
}
