package org.rdma4j.soft.link;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.soft.agent.Agent;
import org.rdma4j.soft.agent.AgentRunner;
import org.rdma4j.soft.agent.IdleStrategy;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Ipv4Header;
import org.rdma4j.soft.wire.Ipv6Header;
import org.rdma4j.soft.wire.UdpHeader;
import org.rdma4j.verbs.Gid;

/**
 * RoCEv2 over UDP: packets leave as datagrams (BTH onward, payload, pad, ICRC) to UDP port
 * {@value #ROCE_PORT} of the destination GID's IP address, and arrive on one receive agent that checks
 * them ({@link UdpDatagrams}) and hands them to the device. How datagrams move is the {@link UdpSocket}
 * of the mode:
 * <ul>
 * <li>{@link Mode#NATIVE} ({@link NativeUdpSocket}): a libc UDP socket through FFM, batched receive with
 * recvmmsg, and on IPv6 UDP_NO_CHECK6_RX so rxe's zero-checksum datagrams are accepted. Interoperates
 * with Linux rxe (and RoCE NICs) over IPv6. Over IPv4 the kernel picks the IP Identification, which the
 * ICRC covers, so only rdma4j peers accept our ICRCs.</li>
 * <li>{@link Mode#RAW_IPV4} ({@link RawIpv4UdpSocket}): like NATIVE, but IPv4 packets are sent on a raw
 * socket with our own IP header (DF, fixed Identification), so their ICRC is right: interoperates with
 * rxe over IPv4. Needs CAP_NET_RAW.</li>
 * <li>{@link Mode#CHANNEL} ({@link ChannelUdpSocket}): a {@code DatagramChannel}; works anywhere Java
 * does, between rdma4j peers (it cannot accept IPv6 datagrams with a zero UDP checksum).</li>
 * </ul>
 * Every mode checks the ICRC of what it receives. Over IPv4 the socket hides the Identification the
 * ICRC covers, so {@link org.rdma4j.soft.wire.Ipv4IcrcSolver} solves the ICRC for it: all other covered
 * bits are checked. Multicast ({@link UdpGroups}) needs a libc socket mode. Thread safe.
 */
public final class UdpLink implements Link {
    /** The RoCEv2 UDP port. */
    public static final int ROCE_PORT = UdpHeader.ROCE_V2_PORT;
    private static final int DATAGRAM_MAX = Packet.BUFFER_SIZE;
    private static final int IPV4_ID = 0x1234;

    /** How datagrams are sent and received. */
    public enum Mode { AUTO, NATIVE, RAW_IPV4, CHANNEL }

    private final InetAddress local;
    private final byte[] localBytes;
    private final int port;
    private final int remotePort;
    private final boolean v6;
    private final Mode mode;
    private final UdpSocket socket;
    private final UdpDatagrams datagrams;
    private final UdpGroups groups;
    private final PacketPool pool = new PacketPool();
    private volatile boolean closed;
    private final AgentRunner receiver;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    /** The last receive filled a whole batch, so more datagrams are probably queued. */
    private volatile boolean backlogged;

    // send side (guarded by sendLock)
    private final Object sendLock = new Object();
    private final MemorySegment sendBuf = Arena.ofAuto().allocate(DATAGRAM_MAX + 64, 8);
    private final MemorySegment pseudo = Arena.ofAuto().allocate(64, 8);
    private final byte[] destBytes;
    private final Icrc sendIcrc = new Icrc();
    private final Ipv4Header sendIp4 = new Ipv4Header();
    private final Ipv6Header sendIp6 = new Ipv6Header();
    private final UdpHeader sendUdp = new UdpHeader();
    /** What the socket sends from sendBuf: the whole IP packet (raw mode), or from the BTH on. */
    private final MemorySegment sendDatagram;

    private UdpLink(InetAddress local, int port, int remotePort, Mode mode, PacketSink sink) throws IOException {
        this.local = local;
        this.localBytes = local.getAddress();
        this.port = port;
        this.remotePort = remotePort;
        this.v6 = !(local instanceof Inet4Address);
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
        int interfaceIndex = interfaceIndex(local);
        this.socket = switch (mode) {
            case CHANNEL -> new ChannelUdpSocket(local, port, v6, pool);
            case RAW_IPV4 -> new RawIpv4UdpSocket(localBytes, port, interfaceIndex, pool);
            default -> new NativeUdpSocket(localBytes, port, v6, interfaceIndex, pool);
        };
        this.datagrams = new UdpDatagrams(sink, v6, port, Gid.of(local), localBytes);
        this.groups = mode == Mode.CHANNEL ? null
                : new UdpGroups(v6, port, localBytes, interfaceIndex, local.getHostAddress(), pool, datagrams);
        sendDatagram = socket.ipHeaderLength() > 0 ? sendBuf : sendBuf.asSlice(UdpHeader.LENGTH);
        receiver = AgentRunner.start(new Receiver(), IdleStrategy.NO_OP, t -> {
            if (!closed) {
                datagrams.malformed.incrementAndGet();
            }
        });
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
            datagrams.badIcrc.incrementAndGet();
            return;
        }
        for (int i = 0; i < destBytes.length; i++) {
            destBytes[i] = dst.byteAt(v6 ? i : 12 + i);
        }
        int ipLen = socket.ipHeaderLength();
        boolean raw = ipLen > 0;
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
        socket.setHopLimitAndClass(dst.isMulticast(), ttl, tos);
        int icrc;
        if (v6) {
            sendIp6.wrap(pseudo, 0).writeUdp(tos, 0, udpLength, ttl).sourceAddress(localBytes, 0)
                    .destinationAddress(destBytes, 0);
            sendUdp.wrap(pseudo, Ipv6Header.LENGTH).write(port, remotePort, udpLength, 0);
            icrc = sendIcrc.compute(pseudo, 0, sendBuf, bth, bthLength);
        } else {
            // Raw mode sends this IP header; the others only compute the ICRC over it.
            Ipv4Header ip = sendIp4.wrap(raw ? sendBuf : pseudo, 0)
                    .writeUdp(tos, Ipv4Header.LENGTH + udpLength, raw ? IPV4_ID : 0, true, ttl,
                            UdpDatagrams.toInt(localBytes), UdpDatagrams.toInt(destBytes));
            ip.updateChecksum();
            MemorySegment ipSeg = ip.segment();
            sendUdp.wrap(ipSeg, Ipv4Header.LENGTH).write(port, remotePort, udpLength, 0);
            icrc = sendIcrc.compute(ipSeg, 0, sendBuf, bth, bthLength);
        }
        Icrc.write(sendBuf, bth + bthLength - Icrc.LENGTH, icrc);
        long r = socket.send(sendDatagram, raw ? ipLen + udpLength : bthLength, destBytes, remotePort);
        if (r < 0) {
            dropped.incrementAndGet();
        } else {
            sent.incrementAndGet();
        }
    }

    // ------------------------------------------------------------------ receive

    /** The receive agent: one socket receive (blocking up to the socket's timeout) per round. */
    private final class Receiver implements Agent {
        private final UdpDatagrams.Scratch scratch = new UdpDatagrams.Scratch();

        @Override
        public String roleName() {
            return "udp-" + local.getHostAddress() + "-" + port;
        }

        @Override
        public int doWork() {
            if (closed) {
                return 0;
            }
            int n = socket.receive(datagrams, scratch);
            boolean full = n == UdpSocket.BATCH;
            if (backlogged != full) {
                backlogged = full;
            }
            return n;
        }

        @Override
        public void onClose() {
            socket.close();
        }
    }

    // ------------------------------------------------------------------ multicast

    /**
     * Joins multicast {@code group} as rxe does (see {@link UdpGroups}): needs a libc socket mode.
     */
    @Override
    public void joinGroup(Gid group) throws IOException {
        if (groups == null) {
            throw new IOException("multicast needs the libc socket modes (NATIVE, RAW_IPV4), not CHANNEL");
        }
        if (group.isIpv4Mapped() == v6) {
            throw new IOException("group " + group + " is not of this link's IP version");
        }
        groups.join(group);
    }

    @Override
    public void leaveGroup(Gid group) {
        if (groups != null) {
            groups.leave(group);
        }
    }

    // ------------------------------------------------------------------ statistics and close

    public long sentDatagrams() {
        return sent.get();
    }

    public long malformedDrops() {
        return datagrams.malformed.get();
    }

    public long icrcDrops() {
        return datagrams.badIcrc.get();
    }

    /**
     * Datagrams the kernel dropped before this link could read them (receive queue full: the
     * transport then recovers them by timeouts), from SO_MEMINFO; 0 in channel mode, where the
     * count cannot be read.
     */
    public long socketDrops() {
        return socket.socketDrops();
    }

    @Override
    public boolean receiveBacklogged() {
        return backlogged;
    }

    /** The socket's receive buffer as the kernel reports it (SO_RCVBUF, bytes). */
    public int receiveBufferBytes() {
        return socket.receiveBufferBytes();
    }

    @Override
    public long dropped() {
        return dropped.get() + datagrams.malformed.get() + datagrams.badIcrc.get() + socketDrops();
    }

    @Override
    public Map<String, Long> counters() {
        Map<String, Long> m = new TreeMap<>();
        m.put("udp_rcvbuf_drops", socketDrops());
        m.put("udp_malformed_drops", datagrams.malformed.get());
        m.put("udp_icrc_drops", datagrams.badIcrc.get());
        m.put("udp_sent_datagrams", sent.get());
        return m;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        socket.interruptReceive();
        receiver.close(2_000); // the socket closes on the receive thread, after its last receive
        if (groups != null) {
            groups.close();
        }
    }
}
