package org.rdma4j.soft.link;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Ipv4Header;
import org.rdma4j.soft.wire.Ipv4IcrcSolver;
import org.rdma4j.soft.wire.Ipv6Header;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.UdpHeader;
import org.rdma4j.verbs.Gid;

/**
 * RoCEv2 over UDP: packets leave as datagrams (BTH onward, payload, pad, ICRC) to UDP port
 * {@value #ROCE_PORT} of the destination GID's IP address, and arrive on one receive thread that
 * checks them and hands them to the device. Modes:
 * <ul>
 * <li>{@link Mode#NATIVE}: a libc UDP socket through FFM, batched receive with recvmmsg, and on IPv6
 * UDP_NO_CHECK6_RX so rxe's zero-checksum datagrams are accepted. Interoperates with Linux rxe (and
 * RoCE NICs) over IPv6. Over IPv4 the kernel picks the IP Identification, which the ICRC covers, so
 * only rdma4j peers accept our ICRCs.</li>
 * <li>{@link Mode#RAW_IPV4}: like NATIVE, but IPv4 packets are sent on a raw socket with our own IP
 * header (DF, fixed Identification), so their ICRC is right: interoperates with rxe over IPv4. Needs
 * CAP_NET_RAW.</li>
 * <li>{@link Mode#CHANNEL}: a {@code DatagramChannel}; works anywhere Java does, between rdma4j peers
 * (it cannot accept IPv6 datagrams with a zero UDP checksum).</li>
 * </ul>
 * Every mode checks the ICRC of what it receives. Over IPv4 the socket hides the Identification the
 * ICRC covers, so {@link Ipv4IcrcSolver} solves the ICRC for it: all other covered bits are checked.
 * Thread safe.
 */
public final class UdpLink implements Link {
    /** The RoCEv2 UDP port. */
    public static final int ROCE_PORT = UdpHeader.ROCE_V2_PORT;
    private static final int BATCH = 32;
    private static final int DATAGRAM_MAX = Packet.BUFFER_SIZE;
    private static final int IPV4_ID = 0x1234;
    /** Requested socket buffer size (the kernel doubles it for bookkeeping, and caps it at net.core.rmem_max). */
    private static final int SOCKET_BUFFER = 8 << 20;

    /** How datagrams are sent and received. */
    public enum Mode { AUTO, NATIVE, RAW_IPV4, CHANNEL }

    private final InetAddress local;
    private final byte[] localBytes;
    private final int port;
    private final int remotePort;
    private final boolean v6;
    private final Mode mode;
    private final PacketSink sink;
    private final PacketPool pool = new PacketPool();
    private final Gid localGid;
    private volatile boolean closed;
    private final Thread receiver;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong malformed = new AtomicLong();
    private final AtomicLong badIcrc = new AtomicLong();
    /** The socket's drop count as last read (kept when the socket closes). */
    private volatile long socketDrops;
    /** The last receive filled a whole batch, so more datagrams are probably queued. */
    private volatile boolean backlogged;
    private final int receiveBufferBytes;

    // send side (guarded by sendLock)
    private final Object sendLock = new Object();
    private final MemorySegment sendBuf = Arena.ofAuto().allocate(DATAGRAM_MAX + 64, 8);
    private final MemorySegment pseudo = Arena.ofAuto().allocate(64, 8);
    private final MemorySegment sendAddr = Arena.ofAuto().allocate(LinuxSockets.SOCKADDR_SIZE, 8);
    private final byte[] destBytes;
    private final Icrc sendIcrc = new Icrc();
    private final LinuxSockets.Call sendCall;
    private final ByteBuffer channelSendView;
    private final Ipv4Header sendIp4 = new Ipv4Header();
    private final Ipv6Header sendIp6 = new Ipv6Header();
    private final UdpHeader sendUdp = new UdpHeader();
    /** Where the datagram starts in sendBuf: after the IP header (raw mode) and the UDP header. */
    private final MemorySegment sendDatagram;

    private final int fd;
    private final int rawFd;
    private final DatagramChannel channel;

    // Per-packet IP header fields (guarded by sendLock): what the sockets are set to now, -1 = unknown.
    private final MemorySegment optionScratch = Arena.ofAuto().allocate(8, 8);
    private int socketTtl = -1;
    private int socketMulticastTtl = -1;
    private int socketTos = -1;

    // Multicast: one socket per joined group, bound to the group address, read by one thread with poll.
    private final Object groupLock = new Object();
    private final Map<Gid, Group> groups = new java.util.HashMap<>();
    private volatile Group[] groupSnapshot = new Group[0];
    private final java.util.concurrent.ConcurrentLinkedQueue<Integer> groupFdsToClose =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private Thread groupReceiver;
    private final int interfaceIndex;

    /** A joined multicast group and the socket that receives it. */
    private record Group(Gid gid, byte[] address, int fd) {
    }

    private UdpLink(InetAddress local, int port, int remotePort, Mode mode, PacketSink sink) throws IOException {
        this.local = local;
        this.localBytes = local.getAddress();
        this.port = port;
        this.remotePort = remotePort;
        this.v6 = !(local instanceof Inet4Address);
        this.sink = sink;
        this.localGid = Gid.of(local);
        this.destBytes = new byte[v6 ? 16 : 4];
        if (mode == Mode.AUTO) {
            mode = LinuxSockets.isAvailable() ? Mode.NATIVE : Mode.CHANNEL;
        }
        if (mode == Mode.RAW_IPV4 && v6) {
            throw new IOException("raw IPv4 mode needs an IPv4 address, not " + local.getHostAddress());
        }
        if (mode != Mode.CHANNEL && !LinuxSockets.isAvailable()) {
            throw new IOException("libc sockets are unavailable here: " + LinuxSockets.unavailabilityCause());
        }
        this.mode = mode;
        this.interfaceIndex = interfaceIndex(local);
        if (mode == Mode.CHANNEL) {
            fd = -1;
            rawFd = -1;
            sendCall = null;
            channel = DatagramChannel.open(v6 ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET);
            channel.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER);
            channel.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER);
            receiveBufferBytes = channel.getOption(StandardSocketOptions.SO_RCVBUF);
            channel.bind(new InetSocketAddress(local, port));
            channelSendView = sendBuf.asByteBuffer();
        } else {
            channel = null;
            channelSendView = null;
            sendCall = new LinuxSockets.Call();
            LinuxSockets.Call c = sendCall;
            fd = LinuxSockets.socket(c, v6 ? LinuxSockets.AF_INET6 : LinuxSockets.AF_INET, LinuxSockets.SOCK_DGRAM,
                    LinuxSockets.IPPROTO_UDP);
            try {
                if (v6) {
                    LinuxSockets.setIntOption(c, fd, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_V6ONLY, 1);
                    LinuxSockets.setIntOption(c, fd, LinuxSockets.SOL_UDP, LinuxSockets.UDP_NO_CHECK6_RX, 1);
                }
                // A burst (a retransmitted window on many QPs) must fit in the receive queue, or the
                // kernel drops datagrams the transport then has to recover by timeouts.
                receiveBufferBytes = LinuxSockets.setBufferSize(c, fd, LinuxSockets.SO_RCVBUF,
                        LinuxSockets.SO_RCVBUFFORCE, SOCKET_BUFFER);
                LinuxSockets.setBufferSize(c, fd, LinuxSockets.SO_SNDBUF, LinuxSockets.SO_SNDBUFFORCE, SOCKET_BUFFER);
                LinuxSockets.setReceiveTimeout(c, fd, 100_000);
                try (Arena a = Arena.ofConfined()) {
                    MemorySegment sa = a.allocate(LinuxSockets.SOCKADDR_SIZE, 8);
                    int len = LinuxSockets.writeSockaddr(sa, localBytes, port);
                    LinuxSockets.bind(c, fd, sa, len);
                }
                rawFd = mode == Mode.RAW_IPV4
                        ? LinuxSockets.socket(c, LinuxSockets.AF_INET, LinuxSockets.SOCK_RAW, LinuxSockets.IPPROTO_RAW)
                        : -1;
                askForHopLimitAndClass(c, fd);
                sendMulticastFromLocal(c, fd);
                if (rawFd >= 0) {
                    sendMulticastFromLocal(c, rawFd);
                }
            } catch (IOException e) {
                LinuxSockets.close(fd);
                throw e;
            }
        }
        sendDatagram = mode == Mode.RAW_IPV4 ? sendBuf : sendBuf.asSlice(UdpHeader.LENGTH);
        receiver = Thread.ofPlatform().daemon().name("rdma4j-udp-" + local.getHostAddress() + "-" + port)
                .unstarted(this::receiveLoop);
        receiver.start();
    }

    /**
     * Opens a link bound to {@code local}:{@code port} that delivers received packets to {@code sink}.
     * Port {@value #ROCE_PORT} is what other RoCE devices send to; other ports only work between rdma4j
     * peers that agree on them.
     */
    public static UdpLink open(InetAddress local, int port, Mode mode, PacketSink sink) throws IOException {
        return new UdpLink(local, port, port, mode, sink);
    }

    /** Like {@link #open(InetAddress, int, Mode, PacketSink)}, sending to {@code remotePort}. */
    public static UdpLink open(InetAddress local, int port, int remotePort, Mode mode, PacketSink sink)
            throws IOException {
        return new UdpLink(local, port, remotePort, mode, sink);
    }

    private static int interfaceIndex(InetAddress local) {
        try {
            java.net.NetworkInterface ni = java.net.NetworkInterface.getByInetAddress(local);
            return ni == null ? 0 : ni.getIndex();
        } catch (IOException e) {
            return 0;
        }
    }

    /** Received datagrams carry their TTL/hop limit and TOS/traffic class as control messages. */
    private void askForHopLimitAndClass(LinuxSockets.Call c, int socket) {
        try {
            if (v6) {
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_RECVHOPLIMIT, 1);
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_RECVTCLASS, 1);
            } else {
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IP, LinuxSockets.IP_RECVTTL, 1);
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IP, LinuxSockets.IP_RECVTOS, 1);
            }
        } catch (IOException e) {
            // Without them a UD GRH area shows the defaults (TTL 64, TOS 0).
        }
    }

    /**
     * Multicast leaves by the interface of the local address (on loopback the kernel has no multicast
     * route otherwise) and loops back to groups joined on this host, our own included.
     */
    private void sendMulticastFromLocal(LinuxSockets.Call c, int socket) {
        try {
            if (v6) {
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_MULTICAST_IF,
                        interfaceIndex);
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_MULTICAST_LOOP, 1);
            } else {
                LinuxSockets.setOption(c, socket, LinuxSockets.IPPROTO_IP, LinuxSockets.IP_MULTICAST_IF, localBytes);
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IP, LinuxSockets.IP_MULTICAST_LOOP, 1);
            }
        } catch (IOException e) {
            // Multicast then goes where the routing table says, if anywhere.
        }
    }

    /** The mode in use (AUTO resolved). */
    public Mode mode() {
        return mode;
    }

    public InetAddress localAddress() {
        return local;
    }

    public int port() {
        return port;
    }

    // ------------------------------------------------------------------ send

    @Override
    public void send(Packet p) {
        try {
            Gid dst = p.dstGid;
            if (closed || dst == null || dst.isIpv4Mapped() == v6) {
                dropped.incrementAndGet(); // no route: a GID of the other IP version, or none
                return;
            }
            synchronized (sendLock) {
                sendLocked(p, dst);
            }
        } finally {
            p.release();
        }
    }

    private void sendLocked(Packet p, Gid dst) {
        if (p.hasIcrc && !sendIcrc.verifyBthOnward(p.buffer, 0, p.headerLength + p.payloadLength + Icrc.LENGTH)) {
            // Corrupted before it reached us (fault injection in front of this link): a NIC would drop it.
            badIcrc.incrementAndGet();
            return;
        }
        for (int i = 0; i < destBytes.length; i++) {
            destBytes[i] = dst.byteAt(v6 ? i : 12 + i);
        }
        int ipLen = mode == Mode.RAW_IPV4 ? Ipv4Header.LENGTH : 0;
        long bth = ipLen + UdpHeader.LENGTH;
        int hl = p.headerLength;
        int pad = (4 - (p.payloadLength & 3)) & 3;
        int bthLength = hl + p.payloadLength + pad + Icrc.LENGTH;
        if (bthLength > DATAGRAM_MAX) {
            dropped.incrementAndGet();
            return;
        }
        MemorySegment.copy(p.buffer, 0, sendBuf, bth, hl);
        p.copyPayload(0, sendBuf, bth + hl, p.payloadLength);
        for (int i = 0; i < pad; i++) {
            sendBuf.set(ValueLayout.JAVA_BYTE, bth + hl + p.payloadLength + i, (byte) 0);
        }
        int udpLength = UdpHeader.LENGTH + bthLength;
        int ttl = p.hopLimit == 0 ? Packet.DEFAULT_HOP_LIMIT : p.hopLimit & 0xFF;
        int tos = p.trafficClass & 0xFF;
        if (mode != Mode.RAW_IPV4) {
            setHopLimitAndClass(dst.isMulticast(), ttl, tos);
        }
        int icrc;
        if (v6) {
            sendIp6.wrap(pseudo, 0).writeUdp(tos, 0, udpLength, ttl).sourceAddress(localBytes, 0)
                    .destinationAddress(destBytes, 0);
            sendUdp.wrap(pseudo, Ipv6Header.LENGTH).write(port, remotePort, udpLength, 0);
            icrc = sendIcrc.compute(pseudo, 0, sendBuf, bth, bthLength);
        } else {
            Ipv4Header ip = sendIp4.wrap(mode == Mode.RAW_IPV4 ? sendBuf : pseudo, 0)
                    .writeUdp(tos, Ipv4Header.LENGTH + udpLength, mode == Mode.RAW_IPV4 ? IPV4_ID : 0, true, ttl,
                            toInt(localBytes), toInt(destBytes));
            ip.updateChecksum();
            MemorySegment ipSeg = ip.segment();
            sendUdp.wrap(ipSeg, Ipv4Header.LENGTH).write(port, remotePort, udpLength, 0);
            icrc = sendIcrc.compute(ipSeg, 0, sendBuf, bth, bthLength);
        }
        Icrc.write(sendBuf, bth + bthLength - Icrc.LENGTH, icrc);
        long r;
        if (mode == Mode.CHANNEL) {
            try {
                channelSendView.clear().position((int) bth).limit((int) bth + bthLength);
                r = channel.send(channelSendView, new InetSocketAddress(InetAddress.getByAddress(destBytes), remotePort));
            } catch (IOException e) {
                r = -1;
            }
        } else if (mode == Mode.RAW_IPV4) {
            int salen = LinuxSockets.writeSockaddr(sendAddr, destBytes, 0);
            r = LinuxSockets.sendto(sendCall, rawFd, sendBuf, ipLen + udpLength, sendAddr, salen);
        } else {
            int salen = LinuxSockets.writeSockaddr(sendAddr, destBytes, remotePort);
            r = LinuxSockets.sendto(sendCall, fd, sendDatagram, bthLength, sendAddr, salen);
        }
        if (r < 0) {
            dropped.incrementAndGet();
        } else {
            sent.incrementAndGet();
        }
    }

    /**
     * Sets the socket's TTL/hop limit (unicast or multicast) and TOS/traffic class to the packet's, when
     * they differ from what the socket has (a setsockopt only on change). The DatagramChannel cannot
     * set a unicast TTL: there the kernel default applies.
     */
    private void setHopLimitAndClass(boolean multicast, int ttl, int tos) {
        if (mode == Mode.CHANNEL) {
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
            return;
        }
        int level = v6 ? LinuxSockets.IPPROTO_IPV6 : LinuxSockets.IPPROTO_IP;
        if (multicast) {
            if (ttl != socketMulticastTtl && LinuxSockets.setIntOption(sendCall, fd, level,
                    v6 ? LinuxSockets.IPV6_MULTICAST_HOPS : LinuxSockets.IP_MULTICAST_TTL, optionScratch, ttl) == 0) {
                socketMulticastTtl = ttl;
            }
        } else if (ttl != socketTtl && LinuxSockets.setIntOption(sendCall, fd, level,
                v6 ? LinuxSockets.IPV6_UNICAST_HOPS : LinuxSockets.IP_TTL, optionScratch, ttl) == 0) {
            socketTtl = ttl;
        }
        if (tos != socketTos && LinuxSockets.setIntOption(sendCall, fd, level,
                v6 ? LinuxSockets.IPV6_TCLASS : LinuxSockets.IP_TOS, optionScratch, tos) == 0) {
            socketTos = tos;
        }
    }

    private static int toInt(byte[] a) {
        return (a[0] & 0xFF) << 24 | (a[1] & 0xFF) << 16 | (a[2] & 0xFF) << 8 | (a[3] & 0xFF);
    }

    // ------------------------------------------------------------------ receive

    private void receiveLoop() {
        try {
            if (mode == Mode.CHANNEL) {
                receiveChannel();
            } else {
                receiveNative();
            }
        } catch (Throwable t) {
            if (!closed) {
                malformed.incrementAndGet();
            }
        }
    }

    private void receiveNative() {
        LinuxSockets.Call c = new LinuxSockets.Call();
        Arena arena = Arena.ofAuto();
        MemorySegment vector = arena.allocate(LinuxSockets.MMSGHDR_SIZE * BATCH, 8);
        MemorySegment iovecs = arena.allocate(LinuxSockets.IOVEC_SIZE * BATCH, 8);
        MemorySegment names = arena.allocate(LinuxSockets.SOCKADDR_SIZE * BATCH, 8);
        MemorySegment controls = arena.allocate(CONTROL_SIZE * BATCH, 8);
        Packet[] slots = new Packet[BATCH];
        ReceiveCheck check = new ReceiveCheck();
        while (!closed) {
            for (int i = 0; i < BATCH; i++) {
                if (slots[i] == null) {
                    slots[i] = pool.acquire();
                }
                long m = LinuxSockets.MMSGHDR_SIZE * i;
                long iov = LinuxSockets.IOVEC_SIZE * i;
                iovecs.set(ValueLayout.JAVA_LONG, iov, slots[i].buffer.address());
                iovecs.set(ValueLayout.JAVA_LONG, iov + 8, Packet.BUFFER_SIZE);
                vector.set(ValueLayout.JAVA_LONG, m, names.address() + LinuxSockets.SOCKADDR_SIZE * i);
                vector.set(ValueLayout.JAVA_LONG, m + 8, LinuxSockets.SOCKADDR_SIZE); // namelen + padding
                vector.set(ValueLayout.JAVA_LONG, m + 16, iovecs.address() + iov);
                vector.set(ValueLayout.JAVA_LONG, m + 24, 1);
                vector.set(ValueLayout.JAVA_LONG, m + 32, controls.address() + CONTROL_SIZE * i); // TTL, TOS
                vector.set(ValueLayout.JAVA_LONG, m + 40, CONTROL_SIZE);
                vector.set(ValueLayout.JAVA_LONG, m + 48, 0); // flags, msg_len
            }
            int n = LinuxSockets.recvmmsg(c, fd, vector, BATCH);
            boolean full = n == BATCH;
            if (backlogged != full) {
                backlogged = full;
            }
            if (n <= 0) {
                continue; // timeout (EAGAIN) to re-check closed, or EINTR
            }
            for (int i = 0; i < n; i++) {
                long m = LinuxSockets.MMSGHDR_SIZE * i;
                int len = vector.get(ValueLayout.JAVA_INT, m + 56);
                int flags = vector.get(ValueLayout.JAVA_INT, m + 48);
                Packet p = slots[i];
                slots[i] = null;
                readHopLimitAndClass(controls, CONTROL_SIZE * i, vector.get(ValueLayout.JAVA_LONG, m + 40), p);
                deliver(p, len, (flags & 0x20) != 0, names, LinuxSockets.SOCKADDR_SIZE * i, check); // 0x20 MSG_TRUNC
            }
            endBatch();
        }
        for (Packet p : slots) {
            if (p != null) {
                p.release();
            }
        }
        LinuxSockets.close(fd);
        if (rawFd >= 0) {
            LinuxSockets.close(rawFd);
        }
    }

    /** Room for the TTL and TOS (or hop limit and traffic class) control messages of one datagram. */
    private static final long CONTROL_SIZE = 64;

    /** Reads the IP_TTL/IP_TOS (IPV6_HOPLIMIT/IPV6_TCLASS) control messages of one datagram into {@code p}. */
    private static void readHopLimitAndClass(MemorySegment controls, long at, long length, Packet p) {
        long end = at + Math.min(length, CONTROL_SIZE);
        long c = at;
        while (c + 16 <= end) {
            long cmsgLen = controls.get(ValueLayout.JAVA_LONG, c);
            if (cmsgLen < 16 || c + cmsgLen > end) {
                return;
            }
            int level = controls.get(ValueLayout.JAVA_INT, c + 8);
            int type = controls.get(ValueLayout.JAVA_INT, c + 12);
            if (level == LinuxSockets.IPPROTO_IP && type == LinuxSockets.IP_TTL
                    || level == LinuxSockets.IPPROTO_IPV6 && type == LinuxSockets.IPV6_HOPLIMIT) {
                p.hopLimit = controls.get(ValueLayout.JAVA_INT, c + 16) & 0xFF;
            } else if (level == LinuxSockets.IPPROTO_IP && type == LinuxSockets.IP_TOS) {
                p.trafficClass = controls.get(ValueLayout.JAVA_BYTE, c + 16) & 0xFF;
            } else if (level == LinuxSockets.IPPROTO_IPV6 && type == LinuxSockets.IPV6_TCLASS) {
                p.trafficClass = controls.get(ValueLayout.JAVA_INT, c + 16) & 0xFF;
            }
            c += (cmsgLen + 7) & ~7L;
        }
    }

    private void receiveChannel() throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(DATAGRAM_MAX);
        MemorySegment view = MemorySegment.ofBuffer(buf);
        MemorySegment name = Arena.ofAuto().allocate(LinuxSockets.SOCKADDR_SIZE, 8);
        ReceiveCheck check = new ReceiveCheck();
        while (!closed) {
            buf.clear();
            InetSocketAddress from;
            try {
                from = (InetSocketAddress) channel.receive(buf);
            } catch (java.nio.channels.ClosedChannelException e) {
                return;
            }
            if (from == null) {
                continue;
            }
            int len = buf.position();
            Packet p = pool.acquire();
            MemorySegment.copy(view, 0, p.buffer, 0, Math.min(len, Packet.BUFFER_SIZE));
            LinuxSockets.writeSockaddr(name, from.getAddress().getAddress(), from.getPort());
            deliver(p, len, len > Packet.BUFFER_SIZE, name, 0, check);
            endBatch();
        }
    }

    /** Per-receive-thread scratch. */
    private static final class ReceiveCheck {
        final Bth bth = new Bth();
        final Ipv6Header ip6 = new Ipv6Header();
        final UdpHeader udp = new UdpHeader();
        final Icrc icrc = new Icrc();
        final Ipv4IcrcSolver ipv4 = new Ipv4IcrcSolver();
        final MemorySegment pseudo = Arena.ofAuto().allocate(64, 8);
        final byte[] srcBytes16 = new byte[16];
        final byte[] srcBytes4 = new byte[4];
        Gid lastSource;
    }

    /**
     * Checks one datagram and hands it to the device; anything truncated, malformed or with a bad ICRC is
     * dropped and counted. Never throws.
     */
    private void deliver(Packet p, int len, boolean truncated, MemorySegment names, long at, ReceiveCheck k) {
        deliver(p, len, truncated, names, at, k, localGid, localBytes, true);
    }

    /** As above, for a datagram sent to {@code dst} (a group, for multicast), batched or not. */
    private void deliver(Packet p, int len, boolean truncated, MemorySegment names, long at, ReceiveCheck k,
                         Gid dst, byte[] dstBytes, boolean batched) {
        try {
            if (truncated || len < Bth.LENGTH + Icrc.LENGTH || len > Packet.BUFFER_SIZE) {
                malformed.incrementAndGet();
                p.release();
                return;
            }
            Bth bth = k.bth.wrap(p.buffer, 0);
            int op = bth.opcode();
            int hl = Opcode.headerLength(op);
            int pad = bth.padCount();
            int payload = len - hl - pad - Icrc.LENGTH;
            if (!Opcode.isValid(op) || bth.tver() != 0 || payload < 0 || payload > Packet.MAX_PAYLOAD
                    || (!Opcode.hasPayload(op) && payload + pad != 0)) {
                malformed.incrementAndGet();
                p.release();
                return;
            }
            int family = names.get(ValueLayout.JAVA_SHORT, at);
            int srcPort = LinuxSockets.port(names, at);
            byte[] src = family == LinuxSockets.AF_INET6 ? k.srcBytes16 : k.srcBytes4;
            MemorySegment.copy(names, ValueLayout.JAVA_BYTE, at + (family == LinuxSockets.AF_INET6 ? 8 : 4), src, 0,
                    src.length);
            if (v6) {
                // The ICRC covers the IPv6 and UDP headers the kernel stripped: rebuild them (masked fields
                // are all ones anyway) from the addresses and ports.
                int udpLength = UdpHeader.LENGTH + len;
                k.ip6.wrap(k.pseudo, 0).writeUdp(0, 0, udpLength, 64).sourceAddress(src, 0)
                        .destinationAddress(dstBytes, 0);
                k.udp.wrap(k.pseudo, Ipv6Header.LENGTH).write(srcPort, port, udpLength, 0);
                int expect = k.icrc.compute(k.pseudo, 0, p.buffer, 0, len);
                if (expect != Icrc.read(p.buffer, len - Icrc.LENGTH)) {
                    badIcrc.incrementAndGet();
                    p.release();
                    return;
                }
            } else if (family != LinuxSockets.AF_INET
                    || !k.ipv4.verify(toInt(src), toInt(dstBytes), srcPort, port, p.buffer, 0, len)) {
                // The socket hides the IP Identification the ICRC covers: the solver finds the one
                // value that makes the ICRC right, or none if any other covered bit is wrong.
                badIcrc.incrementAndGet();
                p.release();
                return;
            }
            Gid from = k.lastSource;
            if (from == null || !sameAddress(from, src)) {
                from = Gid.of(InetAddress.getByAddress(src));
                k.lastSource = from;
            }
            p.headerLength = hl;
            p.setFlatPayload(payload);
            p.srcGid = from;
            p.dstGid = dst;
            p.srcPort = srcPort;
            if (batched) {
                sink.receiveInBatch(p);
            } else {
                sink.receive(p);
            }
        } catch (Throwable t) {
            malformed.incrementAndGet();
        }
    }

    private void endBatch() {
        try {
            sink.endBatch();
        } catch (Throwable t) {
            malformed.incrementAndGet();
        }
    }

    private static boolean sameAddress(Gid g, byte[] a) {
        if (a.length == 4) {
            if (!g.isIpv4Mapped()) {
                return false;
            }
            for (int i = 0; i < 4; i++) {
                if (g.byteAt(12 + i) != a[i]) {
                    return false;
                }
            }
            return true;
        }
        for (int i = 0; i < 16; i++) {
            if (g.byteAt(i) != a[i]) {
                return false;
            }
        }
        return true;
    }

    // ------------------------------------------------------------------ multicast

    /**
     * Joins multicast {@code group} as rxe does: the IPv4 group for an IPv4-mapped GID, else the IPv6
     * group, on the interface of the local address. A socket bound to group:port (SO_REUSEADDR, so
     * several devices on one host can join) receives it; one thread polls all of them.
     */
    @Override
    public void joinGroup(Gid group) throws IOException {
        if (mode == Mode.CHANNEL) {
            throw new IOException("multicast needs the libc socket modes (NATIVE, RAW_IPV4), not CHANNEL");
        }
        if (group.isIpv4Mapped() == v6) {
            throw new IOException("group " + group + " is not of this link's IP version");
        }
        synchronized (groupLock) {
            if (closed) {
                throw new IOException("the link is closed");
            }
            if (groups.containsKey(group)) {
                return;
            }
            LinuxSockets.Call c = new LinuxSockets.Call();
            byte[] address = v6 ? group.bytes() : java.util.Arrays.copyOfRange(group.bytes(), 12, 16);
            int gfd = LinuxSockets.socket(c, v6 ? LinuxSockets.AF_INET6 : LinuxSockets.AF_INET,
                    LinuxSockets.SOCK_DGRAM, LinuxSockets.IPPROTO_UDP);
            try {
                LinuxSockets.setIntOption(c, gfd, LinuxSockets.SOL_SOCKET, LinuxSockets.SO_REUSEADDR, 1);
                if (v6) {
                    LinuxSockets.setIntOption(c, gfd, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_V6ONLY, 1);
                    LinuxSockets.setIntOption(c, gfd, LinuxSockets.SOL_UDP, LinuxSockets.UDP_NO_CHECK6_RX, 1);
                }
                try (Arena a = Arena.ofConfined()) {
                    MemorySegment sa = a.allocate(LinuxSockets.SOCKADDR_SIZE, 8);
                    int len = LinuxSockets.writeSockaddr(sa, address, port);
                    if (v6) {
                        sa.set(ValueLayout.JAVA_INT, 24, interfaceIndex); // scope id, for link-local groups
                    }
                    LinuxSockets.bind(c, gfd, sa, len);
                }
                if (v6) {
                    byte[] mreq = java.util.Arrays.copyOf(address, 20);
                    java.nio.ByteBuffer.wrap(mreq, 16, 4).order(java.nio.ByteOrder.nativeOrder()).putInt(interfaceIndex);
                    LinuxSockets.setOption(c, gfd, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_JOIN_GROUP, mreq);
                } else {
                    byte[] mreq = java.util.Arrays.copyOf(address, 8);
                    System.arraycopy(localBytes, 0, mreq, 4, 4);
                    LinuxSockets.setOption(c, gfd, LinuxSockets.IPPROTO_IP, LinuxSockets.IP_ADD_MEMBERSHIP, mreq);
                }
                try {
                    LinuxSockets.setIntOption(c, gfd, v6 ? LinuxSockets.IPPROTO_IPV6 : LinuxSockets.IPPROTO_IP,
                            v6 ? LinuxSockets.IPV6_MULTICAST_ALL : LinuxSockets.IP_MULTICAST_ALL, 0);
                } catch (IOException older) {
                    // bound to the group address anyway
                }
                askForHopLimitAndClass(c, gfd);
                LinuxSockets.setReceiveTimeout(c, gfd, 100_000);
            } catch (IOException e) {
                LinuxSockets.close(gfd);
                throw e;
            }
            groups.put(group, new Group(group, address, gfd));
            groupSnapshot = groups.values().toArray(new Group[0]);
            if (groupReceiver == null) {
                groupReceiver = Thread.ofPlatform().daemon().name("rdma4j-udp-mcast-" + local.getHostAddress())
                        .start(this::receiveGroups);
            }
        }
    }

    @Override
    public void leaveGroup(Gid group) {
        synchronized (groupLock) {
            Group g = groups.remove(group);
            if (g == null) {
                return;
            }
            groupSnapshot = groups.values().toArray(new Group[0]);
            // Leave now; the receive thread closes the socket once it no longer polls it.
            try {
                LinuxSockets.Call c = new LinuxSockets.Call();
                if (v6) {
                    byte[] mreq = java.util.Arrays.copyOf(g.address(), 20);
                    java.nio.ByteBuffer.wrap(mreq, 16, 4).order(java.nio.ByteOrder.nativeOrder()).putInt(interfaceIndex);
                    LinuxSockets.setOption(c, g.fd(), LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_LEAVE_GROUP, mreq);
                } else {
                    byte[] mreq = java.util.Arrays.copyOf(g.address(), 8);
                    System.arraycopy(localBytes, 0, mreq, 4, 4);
                    LinuxSockets.setOption(c, g.fd(), LinuxSockets.IPPROTO_IP, LinuxSockets.IP_DROP_MEMBERSHIP, mreq);
                }
            } catch (IOException e) {
                // closing the socket leaves the group too
            }
            groupFdsToClose.add(g.fd());
        }
    }

    /** The multicast receive thread: polls the group sockets, hands datagrams to the device one by one. */
    private void receiveGroups() {
        LinuxSockets.Call c = new LinuxSockets.Call();
        Arena arena = Arena.ofAuto();
        MemorySegment vector = arena.allocate(LinuxSockets.MMSGHDR_SIZE, 8);
        MemorySegment iovec = arena.allocate(LinuxSockets.IOVEC_SIZE, 8);
        MemorySegment name = arena.allocate(LinuxSockets.SOCKADDR_SIZE, 8);
        MemorySegment control = arena.allocate(CONTROL_SIZE, 8);
        MemorySegment pollFds = arena.allocate(8L * 64, 8);
        ReceiveCheck check = new ReceiveCheck();
        try {
            while (!closed) {
                try {
                    Integer stale;
                    while ((stale = groupFdsToClose.poll()) != null) {
                        LinuxSockets.close(stale);
                    }
                    Group[] gs = groupSnapshot;
                    if (gs.length == 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L);
                        continue;
                    }
                    if (pollFds.byteSize() < 8L * gs.length) {
                        pollFds = arena.allocate(8L * gs.length, 8);
                    }
                    for (int i = 0; i < gs.length; i++) {
                        pollFds.set(ValueLayout.JAVA_INT, 8L * i, gs[i].fd());
                        pollFds.set(ValueLayout.JAVA_SHORT, 8L * i + 4, LinuxSockets.POLLIN);
                        pollFds.set(ValueLayout.JAVA_SHORT, 8L * i + 6, (short) 0);
                    }
                    if (LinuxSockets.poll(c, pollFds, gs.length, 50) <= 0) {
                        continue;
                    }
                    for (int i = 0; i < gs.length; i++) {
                        if ((pollFds.get(ValueLayout.JAVA_SHORT, 8L * i + 6) & LinuxSockets.POLLIN) == 0) {
                            continue;
                        }
                        Packet p = pool.acquire();
                        iovec.set(ValueLayout.JAVA_LONG, 0, p.buffer.address());
                        iovec.set(ValueLayout.JAVA_LONG, 8, Packet.BUFFER_SIZE);
                        vector.set(ValueLayout.JAVA_LONG, 0, name.address());
                        vector.set(ValueLayout.JAVA_LONG, 8, LinuxSockets.SOCKADDR_SIZE);
                        vector.set(ValueLayout.JAVA_LONG, 16, iovec.address());
                        vector.set(ValueLayout.JAVA_LONG, 24, 1);
                        vector.set(ValueLayout.JAVA_LONG, 32, control.address());
                        vector.set(ValueLayout.JAVA_LONG, 40, CONTROL_SIZE);
                        vector.set(ValueLayout.JAVA_LONG, 48, 0);
                        int got;
                        try {
                            got = LinuxSockets.recvmmsg(c, gs[i].fd(), vector, 1);
                        } catch (Throwable t) {
                            p.release();
                            throw t;
                        }
                        if (got != 1) {
                            p.release();
                            continue;
                        }
                        readHopLimitAndClass(control, 0, vector.get(ValueLayout.JAVA_LONG, 40), p);
                        deliver(p, vector.get(ValueLayout.JAVA_INT, 56), (vector.get(ValueLayout.JAVA_INT, 48) & 0x20) != 0,
                                name, 0, check, gs[i].gid(), gs[i].address(), false);
                    }
                } catch (Throwable t) {
                    // One failed call (a socket closed under us, a downcall error) must not end multicast
                    // for the link: count it, back off a moment, poll again.
                    if (!closed) {
                        malformed.incrementAndGet();
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
                    }
                }
            }
        } finally {
            Integer stale;
            while ((stale = groupFdsToClose.poll()) != null) {
                LinuxSockets.close(stale);
            }
        }
    }

    // ------------------------------------------------------------------ statistics and close

    public long sentDatagrams() {
        return sent.get();
    }

    public long malformedDrops() {
        return malformed.get();
    }

    public long icrcDrops() {
        return badIcrc.get();
    }

    /**
     * Datagrams the kernel dropped before this link could read them (receive queue full: the
     * transport then recovers them by timeouts), from SO_MEMINFO; 0 in channel mode, where the
     * count cannot be read.
     */
    public long socketDrops() {
        if (fd >= 0 && !closed) {
            long d = LinuxSockets.socketDrops(fd);
            if (d > socketDrops) {
                socketDrops = d;
            }
        }
        return socketDrops;
    }

    @Override
    public boolean receiveBacklogged() {
        return backlogged;
    }

    /** The socket's receive buffer as the kernel reports it (SO_RCVBUF, bytes). */
    public int receiveBufferBytes() {
        return receiveBufferBytes;
    }

    @Override
    public long dropped() {
        return dropped.get() + malformed.get() + badIcrc.get() + socketDrops();
    }

    @Override
    public Map<String, Long> counters() {
        Map<String, Long> m = new TreeMap<>();
        m.put("udp_rcvbuf_drops", socketDrops());
        m.put("udp_malformed_drops", malformed.get());
        m.put("udp_icrc_drops", badIcrc.get());
        m.put("udp_sent_datagrams", sent.get());
        return m;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        socketDrops(); // keep the last count: the descriptor goes away with the receive thread
        Thread groupThread;
        synchronized (groupLock) {
            closed = true;
            for (Group g : groups.values()) {
                groupFdsToClose.add(g.fd());
            }
            groups.clear();
            groupSnapshot = new Group[0];
            groupThread = groupReceiver;
        }
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
        try {
            receiver.join(2_000);
            if (groupThread != null) {
                groupThread.join(2_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
