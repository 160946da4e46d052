// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.link.PacketSink;
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
 * bits are checked. Multicast ({@link UdpGroups}) needs a libc socket mode.
 * <p>
 * A unicast packet for the link's own address (a QP connected to a QP of its own device, or to itself)
 * does not go through the socket: as rxe loops such a packet back, the link frames it (ICRC over the
 * headers it would have had, to and from its own port) and delivers it on the sending thread to its own
 * device's receive path, through the same checks as a received datagram. Not on a link opened with a
 * remote port other than its own: there the address is shared with the device at the remote port (two
 * rdma4j devices on one address, told apart by port), so a packet to it goes to that port.
 * <p>
 * Receiving: in the libc socket modes a thread that polls the device (an empty CQ poll calls
 * {@link #poll()}) reads the socket itself, without a hand-off to the receive agent and a wake-up. One
 * receiver at a time per socket holds the link's receive token (so packets reach the device in the
 * order the socket queued them, and the device's receive batch has one user): the agent while it
 * receives, a poller for one non-blocking receive. While threads poll (one did within the last
 * {@link UdpReceiver#POLLING_NS} ns) the agent stands by: it parks (from {@link UdpReceiver#STANDBY_NS}
 * ns, doubling up to {@link UdpReceiver#MAX_STANDBY_NS}) instead of waiting in the socket, so it neither
 * takes datagrams from the poller nor wakes for them. When polling stops the agent receives again, at
 * once when the poller says so ({@link #pollerBlocks()}: it is about to wait on a completion channel),
 * else within its current park. CHANNEL mode has no non-blocking receive next to a blocking one: there
 * only the agent receives.
 * <p>
 * This class opens the socket and puts the parts together: {@link UdpSendStage} (framing, batched
 * sends, deferral, doorbell batching, ACK hold), {@link UdpReceiver} (the receive token, the agent,
 * polling and waiting), {@link UdpSelfDelivery} (packets to its own address), {@link UdpGroups}
 * (multicast) and {@link UdpDatagrams} (the checks of what arrives). Thread safe.
 */
public final class UdpLink implements Link {
    /** The RoCEv2 UDP port. */
    public static final int ROCE_PORT = UdpHeader.ROCE_V2_PORT;
    /** How datagrams are sent and received. */
    public enum Mode { AUTO, NATIVE, RAW_IPV4, CHANNEL }

    private final InetAddress local;
    private final byte[] localBytes;
    private final int port;
    private final boolean v6;
    private final Mode mode;
    private final UdpSocket socket;
    private final UdpDatagrams datagrams;
    private final UdpGroups groups;
    private final PacketPool pool = new PacketPool();
    /** Who reads the socket when: the receive agent, pollers, event waiters. */
    private final UdpReceiver receiver;
    /** Frames, stages and sends. */
    private final UdpSendStage stage;
    /** Delivers packets to this link's own address (see the class comment). */
    private final UdpSelfDelivery self;
    private UdpLink(InetAddress local, int port, int remotePort, Mode mode, PacketSink sink) throws IOException {
        this.local = local;
        this.localBytes = local.getAddress();
        this.port = port;
        this.v6 = !(local instanceof Inet4Address);
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
        Gid localGid = Gid.of(local);
        this.datagrams = new UdpDatagrams(sink, v6, port, localGid, localBytes);
        AtomicLong dropped = new AtomicLong();
        this.self = new UdpSelfDelivery(socket, datagrams, v6, localBytes, port, localGid, dropped);
        this.stage = new UdpSendStage(socket, datagrams, self, dropped, v6, localBytes, port, remotePort, localGid,
                local.getHostAddress() + ":" + port);
        this.groups = mode == Mode.CHANNEL ? null
                : new UdpGroups(v6, port, localBytes, interfaceIndex, local.getHostAddress(), pool, datagrams);
        this.receiver = new UdpReceiver(socket, datagrams, stage, "udp-" + local.getHostAddress() + "-" + port);
    }

    /**
     * Opens a link bound to {@code local}:{@code port} that delivers received packets to {@code sink}.
     * Port {@value #ROCE_PORT} is what other RoCE devices send to; other ports only work between rdma4j
     * peers that agree on them.
     */
    public static UdpLink open(InetAddress local, int port, Mode mode, PacketSink sink) throws IOException {
        return new UdpLink(local, port, port, mode, sink);
    }

    /**
     * Like {@link #open(InetAddress, int, Mode, PacketSink)}, sending to {@code remotePort}. With a remote
     * port other than {@code port}, the link's own address also belongs to the device at the remote port
     * (two rdma4j devices on one address): packets to it go there, not back to this device.
     */
    public static UdpLink open(InetAddress local, int port, int remotePort, Mode mode, PacketSink sink)
            throws IOException {
        return new UdpLink(local, port, remotePort, mode, sink);
    }

    /** Whether the libc socket modes (NATIVE, RAW_IPV4), and with them {@link #poll()}, work here. */
    public static boolean libcSocketsAvailable() {
        return LinuxSockets.isAvailable();
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
        stage.send(p);
    }

    /**
     * Whether {@link #send(Packet[], int)} hands several datagrams to the kernel in one call (sendmmsg:
     * the libc socket modes, where the C library and the kernel have it); see
     * {@link #sendBatchUnavailable()}.
     */
    @Override
    public boolean sendsInBatches() {
        return socket.sendBatchUnavailable() == null;
    }

    /** From now on one system call per datagram, for {@code reason} (tests: a kernel without sendmmsg). */
    void stopSendBatching(String reason) {
        stage.stopSendBatching(reason);
    }

    /** Null while sends are batched; else, in one line, why each datagram is one system call. */
    public String sendBatchUnavailable() {
        return socket.sendBatchUnavailable();
    }

    /**
     * Sends {@code count} packets in order as {@link #send(Packet)} would, each datagram byte for byte
     * the same, but a run of up to {@link UdpSocket#SEND_BATCH} of them (same hop limit, class and
     * multicast-ness: those are socket options) in one sendmmsg. A packet to this link's own address
     * is delivered between the runs, outside the send lock, as {@link #send(Packet)} delivers it.
     * Without batched sends in this mode, one call per datagram. Takes ownership of every packet and
     * clears its slot; returns how many were lost because their memory was freed before the copy.
     */
    @Override
    public int send(Packet[] packets, int count) {
        if (!sendsInBatches()) {
            return Link.super.send(packets, count);
        }
        return stage.send(packets, count);
    }

    /** Tests: how long a poller's own deferred responses outlive its polls (see UdpSendStage.ACK_HOLD_NS). */
    void holdAcksFor(long ns) {
        stage.holdAcksFor(ns);
    }

    /** Tests: whether a poll by {@code t} now would leave what is deferred staged. */
    boolean holdsDeferredFor(Thread t) {
        return stage.holdsDeferredFor(t);
    }

    // ------------------------------------------------------------------ receive

    /**
     * Receives what has arrived, on the calling thread, if no other thread is receiving on this link
     * right now; returns the packets handled (0 also in CHANNEL mode, or closed). Never blocks. Marks
     * the link as polled, so the receive agent stands by (see the class comment).
     */
    @Override
    public int poll() {
        return receiver.poll();
    }

    /**
     * Receives what the socket holds now on the calling thread (the progress agent, before a timer
     * judges an ACK missing), up to {@link UdpReceiver#ARRIVED_BATCHES} batches, not as a poller; -1
     * while another thread holds the receive token (it is receiving: see {@link #receiveBacklogged}).
     */
    @Override
    public int receiveArrived() {
        return receiver.receiveArrived();
    }

    /**
     * Waits on the calling thread for datagrams (poll(2), at most {@link UdpReceiver#AWAIT_SLICE_NS} at
     * a time) and receives them, holding the receive token meanwhile: the agent and pollers stay out,
     * and a thread waiting for a completion event receives its own packet instead of being woken by the
     * agent after it did. -1 in CHANNEL mode, once closed, or while another thread holds the token.
     */
    @Override
    public int await(long timeoutNs) {
        return receiver.await(timeoutNs);
    }

    /** Whether a thread is waiting in {@link #await} now (for tests). */
    public boolean awaiting() {
        return receiver.awaiting();
    }

    @Override
    public void wakeAwait() {
        receiver.wakeAwait();
    }

    @Override
    public void pollerBlocks() {
        receiver.pollerBlocks();
    }

    /**
     * Keeps the receive agent out of the socket ({@code true}), so only {@link #poll()} receives, or
     * lets it receive again. Waits (up to 2 s, as long as a blocked receive can take) until the agent is
     * out; false if it is not, or the mode cannot poll. For tests of the poll path.
     */
    public boolean holdReceiveAgent(boolean hold) throws InterruptedException {
        return receiver.holdReceiveAgent(hold);
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
        return stage.sent.get();
    }

    /** Datagrams received by threads polling the link ({@link #poll()}). */
    public long polledPackets() {
        return receiver.polledPackets.get();
    }

    /** Datagrams received by the link's receive agent. */
    public long agentPackets() {
        return receiver.agentPackets.get();
    }

    /**
     * Unicast packets to this link's own address, delivered to its device without the socket (always 0
     * on a link whose remote port is not its own port).
     */
    public long selfDeliveredPackets() {
        return self.delivered.get();
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
        return receiver.backlogged();
    }

    /** The socket's receive buffer as the kernel reports it (SO_RCVBUF, bytes). */
    public int receiveBufferBytes() {
        return socket.receiveBufferBytes();
    }

    @Override
    public long dropped() {
        return stage.dropped.get() + datagrams.malformed.get() + datagrams.badIcrc.get() + socketDrops();
    }

    @Override
    public Map<String, Long> counters() {
        Map<String, Long> m = new TreeMap<>();
        m.put("udp_rcvbuf_drops", socketDrops());
        m.put("udp_malformed_drops", datagrams.malformed.get());
        m.put("udp_icrc_drops", datagrams.badIcrc.get());
        m.put("udp_sent_datagrams", stage.sent.get());
        m.put("udp_sendmmsg_calls", socket.sendBatchCalls());
        m.put("udp_gso_messages", socket.gsoMessages());
        m.put("udp_gso_datagrams", socket.gsoDatagrams());
        m.put("udp_self_delivered_packets", self.delivered.get());
        m.put("udp_polled_packets", receiver.polledPackets.get());
        m.put("udp_agent_packets", receiver.agentPackets.get());
        m.put("udp_await_wakeups", receiver.awaitWakeups.get());
        m.put("udp_deferred_packets", stage.deferredPackets.get());
        m.put("udp_doorbell_packets", stage.doorbellPackets.get());
        m.put("udp_ride_along_sends", stage.rideAlongSends.get());
        m.put("udp_overtaking_sends", stage.overtakingSends.get());
        return m;
    }

    @Override
    public synchronized void close() {
        if (stage.closed) {
            return;
        }
        stage.flushDeferred(); // what a poller deferred (the ACK of the last message, say) still leaves
        stage.closed = true;
        socket.interruptReceive();
        socket.wakeReceiver(); // a thread waiting in await returns now, not after its slice
        receiver.close(2_000); // the socket closes on the receive thread, after its last receive
        if (groups != null) {
            groups.close();
        }
    }
}
