// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.soft.agent.Agent;
import org.rdma4j.soft.agent.AgentRunner;
import org.rdma4j.soft.agent.IdleStrategy;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.Packet;
import org.rdma4j.soft.link.PacketPool;
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
 * {@link #POLLING_NS} ns) the agent stands by: it parks (from {@link #STANDBY_NS} ns, doubling up to
 * {@link #MAX_STANDBY_NS}) instead of waiting in the socket, so it neither takes datagrams from the
 * poller nor wakes for them. When polling stops the agent receives again, at once when the poller says
 * so ({@link #pollerBlocks()}: it is about to wait on a completion channel), else within its current
 * park. CHANNEL mode has no non-blocking
 * receive next to a blocking one: there only the agent receives. Thread safe.
 */
public final class UdpLink implements Link {
    /** The RoCEv2 UDP port. */
    public static final int ROCE_PORT = UdpHeader.ROCE_V2_PORT;
    /** A {@link #poll()} at most this long ago means a thread is polling the link now. */
    static final long POLLING_NS = 50_000;
    /**
     * How long the receive agent first parks while threads poll (-Drdma4j.udp.standbyMicros, default
     * 100); each further park in a row is twice as long, up to {@link #MAX_STANDBY_NS}.
     */
    static final long STANDBY_NS = Math.max(10, Long.getLong("rdma4j.udp.standbyMicros", 100)) * 1_000;
    /**
     * The longest stand-by park (-Drdma4j.udp.maxStandbyMicros, default 1000): how late the agent may
     * notice that polling stopped without {@link #pollerBlocks()}. Long parks save the agent's
     * wake-ups, but on a loaded machine a spinning poller that lost its core for a time slice leaves
     * the socket unread until the agent comes back; measured with 5 ms, the round trip's median went
     * from about 0.1 ms to 3 ms under load. Without doubling (parks of 100 us only), the agent's 10 000
     * wake-ups a second while threads poll put a second mode near 340 us into the busy round trip
     * under load, often its median; doubling up to 1 ms took it out
     * (docs/decisions/0004-udp-the-polling-thread-receives.md).
     */
    static final long MAX_STANDBY_NS = Math.max(STANDBY_NS,
            Long.getLong("rdma4j.udp.maxStandbyMicros", 1_000) * 1_000);
    /** At most this many receive batches per {@link #receiveArrived()}. */
    static final int ARRIVED_BATCHES = 16;
    /** The receive agent's longest wait in poll(2): it re-checks for close this often. */
    static final int AGENT_WAIT_MS = 100;
    /** The longest single wait of {@link #await}: a waiter re-checks its deadline, interrupts and close. */
    static final long AWAIT_SLICE_NS = 50_000_000;
    // The receive token's states.
    private static final int FREE = 0;
    private static final int HELD = 1;
    private static final int CLOSED = 2;

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
    private final AgentRunner receiver;
    /** Frames, stages and sends. */
    private final UdpSendStage stage;
    /** Delivers packets to this link's own address (see the class comment). */
    private final UdpSelfDelivery self;
    /** The last receive filled a whole batch, so more datagrams are probably queued. */
    private volatile boolean backlogged;

    // receive side
    /** Who may read the socket: FREE, HELD by the agent or a poller, or CLOSED (see the class comment). */
    private final AtomicInteger receiveToken = new AtomicInteger(FREE);
    /** What a receive needs; used only by the token's holder. */
    private final UdpDatagrams.Scratch receiveScratch = new UdpDatagrams.Scratch();
    /** Whether the socket has a non-blocking receive, so callers may poll it. */
    private final boolean pollable;
    /** When a thread last called {@link #poll()} (System.nanoTime()). */
    private volatile long lastPollNs = System.nanoTime() - 3_600_000_000_000L;
    /** A poller is about to block: the agent receives now, whatever {@link #lastPollNs} says. */
    private volatile boolean agentWanted;
    /** Tests: the agent stays out of the socket; only {@link #poll()} receives. */
    private volatile boolean agentHeld;
    /** The agent has seen {@link #agentHeld} and is out of the socket. */
    private volatile boolean agentOut;
    private final AtomicLong polledPackets = new AtomicLong();
    private final AtomicLong agentPackets = new AtomicLong();
    private final AtomicLong awaitWakeups = new AtomicLong();
    /** A thread is inside {@link #await}'s wait for the socket (tests). */
    private volatile boolean awaiting;

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
        pollable = socket.canReceiveNow();
        receiver = AgentRunner.start(new Receiver(), IdleStrategy.NO_OP, t -> {
            if (!stage.closed) {
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
        if (!pollable) {
            return 0;
        }
        lastPollNs = System.nanoTime();
        Thread current = Thread.currentThread();
        if (stage.lastPoller != current) {
            stage.lastPoller = current;
        }
        stage.endDoorbell();
        if (stage.deferred > 0 && !stage.heldForReply(current)) {
            stage.flushDeferred();
        }
        if (receiveToken.get() != FREE || !receiveToken.compareAndSet(FREE, HELD)) {
            return 0; // another thread is receiving: what it takes it hands to the device
        }
        stage.deferring = Thread.currentThread();
        try {
            return receiveHolding(polledPackets);
        } finally {
            stage.deferring = null;
            stage.flushIfAgentInSocket();
        }
    }

    /**
     * Receives what the socket holds now on the calling thread (the progress agent, before a timer
     * judges an ACK missing), up to {@link #ARRIVED_BATCHES} batches, not as a poller; -1 while another
     * thread holds the receive token (it is receiving: see {@link #receiveBacklogged}).
     */
    @Override
    public int receiveArrived() {
        int total = 0;
        for (int i = 0; pollable && !stage.closed && i < ARRIVED_BATCHES; i++) {
            if (receiveToken.get() != FREE || !receiveToken.compareAndSet(FREE, HELD)) {
                return i == 0 ? -1 : total;
            }
            int n = receiveBatch(agentPackets);
            total += n;
            if (n < UdpSocket.BATCH) {
                break;
            }
        }
        return total;
    }

    /** One receive with the token held; what the device answers (ACKs) leaves in one sendmmsg after it. */
    private int receiveBatch(AtomicLong tally) {
        stage.deferring = Thread.currentThread();
        try {
            return receiveHolding(tally);
        } finally {
            stage.deferring = null;
            stage.flushDeferred();
        }
    }

    /** Receives what is queued now with the receive token held, gives the token back, counts into {@code tally}. */
    private int receiveHolding(AtomicLong tally) {
        int n;
        try {
            n = socket.receiveNow(datagrams, receiveScratch);
            noteBatch(n);
        } finally {
            receiveToken.set(FREE);
        }
        if (n > 0) {
            tally.addAndGet(n);
        }
        return n;
    }

    /**
     * Waits on the calling thread for datagrams (poll(2), at most {@link #AWAIT_SLICE_NS} at a time)
     * and receives them, holding the receive token meanwhile: the agent and pollers stay out, and a
     * thread waiting for a completion event receives its own packet instead of being woken by the
     * agent after it did. -1 in CHANNEL mode, once closed, or while another thread holds the token.
     */
    @Override
    public int await(long timeoutNs) {
        if (!pollable || stage.closed) {
            return -1;
        }
        stage.endDoorbell();
        stage.flushDeferred();
        if (receiveToken.get() != FREE || !receiveToken.compareAndSet(FREE, HELD)) {
            return -1;
        }
        int n = 0;
        lastPollNs = System.nanoTime(); // the agent stands by while threads wait here too
        try {
            long ns = Math.min(Math.max(timeoutNs, 0), AWAIT_SLICE_NS);
            int ms = (int) Math.max(1, (ns + 999_999) / 1_000_000);
            awaiting = true;
            boolean readable = !stage.closed && socket.awaitReadable(ms);
            awaiting = false;
            if (readable) {
                stage.deferring = Thread.currentThread();
                n = socket.receiveNow(datagrams, receiveScratch);
                noteBatch(n);
            }
        } finally {
            stage.deferring = null;
            lastPollNs = System.nanoTime();
            receiveToken.set(FREE);
            stage.flushIfAgentInSocket();
        }
        if (n > 0) {
            polledPackets.addAndGet(n);
        }
        return n;
    }

    /** Whether a thread is waiting in {@link #await} now (for tests). */
    public boolean awaiting() {
        return awaiting;
    }

    @Override
    public void wakeAwait() {
        if (pollable && !stage.closed) {
            awaitWakeups.incrementAndGet();
            socket.wakeReceiver();
        }
    }

    @Override
    public void pollerBlocks() {
        stage.endDoorbell();
        stage.flushDeferred();
        if (pollable && !stage.closed) {
            agentWanted = true;
            receiver.wake();
        }
    }

    /**
     * Keeps the receive agent out of the socket ({@code true}), so only {@link #poll()} receives, or
     * lets it receive again. Waits (up to 2 s, as long as a blocked receive can take) until the agent is
     * out; false if it is not, or the mode cannot poll. For tests of the poll path.
     */
    public boolean holdReceiveAgent(boolean hold) throws InterruptedException {
        if (!pollable) {
            return false;
        }
        agentHeld = hold;
        receiver.wake();
        if (!hold) {
            return true;
        }
        long end = System.nanoTime() + 2_000_000_000L;
        while (!agentOut && System.nanoTime() - end < 0) {
            Thread.sleep(1);
        }
        return agentOut;
    }

    private void noteBatch(int n) {
        boolean full = n == UdpSocket.BATCH;
        if (backlogged != full) {
            backlogged = full;
        }
    }

    /**
     * The receive agent: one socket receive (blocking up to the socket's timeout) per round, holding
     * the receive token; while threads poll, a stand-by park instead.
     */
    private final class Receiver implements Agent {
        /** The next stand-by park: doubles while threads keep polling, back to the first after a receive. */
        private long standbyNs = STANDBY_NS;

        private int standBy() {
            LockSupport.parkNanos(standbyNs);
            standbyNs = Math.min(standbyNs * 2, MAX_STANDBY_NS);
            return 0;
        }

        @Override
        public String roleName() {
            return "udp-" + local.getHostAddress() + "-" + port;
        }

        @Override
        public int doWork() {
            if (stage.closed) {
                return 0;
            }
            if (pollable) {
                stage.flushDeferred(); // what a poller deferred waits at most one stand-by park
                if (agentHeld) {
                    agentOut = true;
                    LockSupport.parkNanos(STANDBY_NS);
                    return 0;
                }
                agentOut = false;
                if (agentWanted) {
                    agentWanted = false;
                    standbyNs = STANDBY_NS;
                } else if (System.nanoTime() - lastPollNs < POLLING_NS) {
                    return standBy(); // a thread polls: stand by, out of its way
                }
                // Wait for a datagram without the token, so a poller or an event waiter can take the
                // socket meanwhile; a waiter that holds it is receiving: stand by.
                if (receiveToken.get() != FREE) {
                    return standBy();
                }
                standbyNs = STANDBY_NS;
                // A poller that defers a packet after the flag is set sends it itself (poll()); one that
                // deferred before is flushed here: both fields are volatile, so one of the two sees it.
                stage.agentInSocket = true;
                boolean readable;
                try {
                    stage.flushDeferred();
                    readable = socket.agentAwaitReadable(AGENT_WAIT_MS);
                } finally {
                    stage.agentInSocket = false;
                }
                if (!readable) {
                    return 0; // the timeout, to re-check for close
                }
                if (!receiveToken.compareAndSet(FREE, HELD)) {
                    return standBy(); // another thread took the socket first
                }
                return receiveBatch(agentPackets);
            }
            int n = socket.receive(datagrams, receiveScratch); // CHANNEL: blocks, up to its timeout
            noteBatch(n);
            if (n > 0) {
                agentPackets.addAndGet(n);
            }
            return n;
        }

        @Override
        public void onClose() {
            // A poller holds the token for one non-blocking receive at most: wait for it, so the socket
            // never closes under a receive (bounded, should a poller thread be descheduled for long).
            long end = System.nanoTime() + 1_000_000_000L;
            while (pollable && !receiveToken.compareAndSet(FREE, CLOSED) && System.nanoTime() - end < 0) {
                Thread.yield();
            }
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
        return stage.sent.get();
    }

    /** Datagrams received by threads polling the link ({@link #poll()}). */
    public long polledPackets() {
        return polledPackets.get();
    }

    /** Datagrams received by the link's receive agent. */
    public long agentPackets() {
        return agentPackets.get();
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
        // also while a thread other than an idle event waiter holds the receive token: it is taking
        // packets in now (or was descheduled doing so), and an ACK may be among them
        return backlogged || receiveToken.get() == HELD && !awaiting;
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
        m.put("udp_polled_packets", polledPackets.get());
        m.put("udp_agent_packets", agentPackets.get());
        m.put("udp_await_wakeups", awaitWakeups.get());
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
