// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LinkLog;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.link.PacketSink;
import org.rdma4j.soft.link.udp.UdpDatagrams;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.verbs.Gid;

/**
 * RoCEv2 between devices of different processes on one host through shared memory, in front of the
 * device's {@link UdpLink}: the bytes a datagram would carry (BTH onward, payload, pad, ICRC over the
 * IP and UDP headers it would have had) go through a {@link ShmRing} the receiving device created in
 * {@link #directory()}, named for its address and UDP port. Everything else goes through the UDP link:
 * multicast, packets to this device's own address and port, peers that are not local or have no ring
 * file (with {@link Policy#AUTO}), and all packets once a peer's ring is gone. Received packets pass the
 * checks a datagram passes ({@link UdpDatagrams}: lengths, BTH, ICRC) and go to the device on the
 * link's receive agent, which busy-polls briefly after the last packet (not at all while a thread
 * polls) and then sleeps until a sender wakes it: with futex(2) on the ring's sleeping word, or where
 * that is not to be had, with a datagram to a loopback doorbell port named in the ring file; or on the
 * thread that calls {@link #poll()}. See docs/decisions/0007 (rings, lanes, trust) and 0021 (wake-ups).
 * <p>
 * This class is the policy (which packet goes which way, the configuration, the counters) and puts the
 * parts together: a {@link ShmPeer} per destination (its ring mapped, its lane, its backlog), a {@link
 * ShmReceiver} for its own ring (the consumer and the receive agent), {@link ShmLanes} (the checks of what
 * arrives), and the {@link ShmRing} file itself. Thread safe.
 */
public final class ShmLink implements Link {
    /** How a device's packets travel to local peers. */
    public enum Policy {
        /** UDP only (no ring file). */
        UDP,
        /** Shared memory to local peers that have a ring file, UDP to the rest. */
        AUTO,
        /** Shared memory only for unicast to other devices: no (trusted) ring is a counted drop; a full ring of lanes, UDP. */
        SHM
    }

    /**
     * After the last packet (or wake-up) the receive agent spins this long (system property
     * {@code rdma4j.shm.spinUs}, default 0: none), then sleeps until a sender wakes it; while a thread
     * polls (see {@link #POLLING_NS}) it does not spin at all. No yielding phase: on a host with fewer
     * cores than spinning threads a spinning or yielding agent waits a time slice for its core, a
     * sleeping one is woken in microseconds; 20 µs of spin measured worse than none, both for
     * write_lat and the 64 KiB stream (docs/decisions/0021-shm-receive-agent-sleeps-on-a-futex.md).
     */
    static final long SPIN_NS = Long.getLong("rdma4j.shm.spinUs", 0) * 1000;
    /**
     * Whether this device's receivers check (and so its senders must compute) the ICRC of ring packets
     * (system property {@code rdma4j.shm.icrc}, default true). Memory does not flip bits in transit and
     * a peer that can write the ring can compute a valid ICRC, so the ICRC protects nothing here; off,
     * every other header check still runs. A sender follows what the receiver's ring file says.
     */
    static final boolean CHECK_ICRC = Boolean.parseBoolean(System.getProperty("rdma4j.shm.icrc", "true"));
    /**
     * Whether this device's receive agent sleeps in futex(2) on its ring's sleeping word, woken by the
     * sender's FUTEX_WAKE (system property {@code rdma4j.shm.futex}, default true where futex calls work),
     * rather than in a selector on the doorbell socket, woken by a datagram.
     */
    static final boolean USE_FUTEX = Boolean.parseBoolean(System.getProperty("rdma4j.shm.futex", "true"))
            && Futex.isAvailable();
    /**
     * Whether this device's ring takes bursts (system property {@code rdma4j.shm.bursts}, default true):
     * a sender then puts up to {@link #BURST_PAYLOAD} bytes of one RC WRITE (several packets) in one
     * ring entry, copied once, handed over and acknowledged once, as the in-process fabric does
     * ({@link Packet#burstPackets}); the receiver's engine reads the payload from the ring in place.
     */
    static final boolean BURSTS = Boolean.parseBoolean(System.getProperty("rdma4j.shm.bursts", "true"));
    /** The most payload one burst carries (16 packets at MTU 4096). */
    static final int BURST_PAYLOAD = 64 * 1024;
    /** The longest sleep of the receive agent without a wake-up (bounds any missed one). */
    static final long SLEEP_MS = 50;
    /** Lanes (sending devices) per ring file and slots per lane. */
    static final int LANES = 8;
    static final int SLOTS = 256;
    /**
     * How long a sender waits for room in a full lane before it queues the packet in the peer's
     * {@link ShmBacklog}; this link's consumer never waits (two consumers sending to each other's full
     * lanes would wait for each other) and queues at once.
     */
    static final long FULL_WAIT_NS = 2_000_000;
    /** How long the receive agent sleeps at most while a backlog waits for room in a peer's lane. */
    static final long BACKLOG_RETRY_NS = 100_000;
    private static final System.Logger LOG = System.getLogger(LinkLog.CATEGORY);
    /** How often a destination without a usable ring is looked at again. */
    static final long RETRY_NS = 1_000_000_000L;

    private final UdpLink udp;
    final Policy policy;
    private final InetAddress local;
    final byte[] localBytes;
    private final Gid localGid;
    final int port;
    final int remotePort;
    final boolean v6;
    final ShmRing.Identity self;
    final UdpDatagrams datagrams;
    private final PacketSink sink;
    private final ConcurrentHashMap<Gid, ShmPeer> peers = new ConcurrentHashMap<>();
    /** The peers, for the receive agent's backlog flush (copied on write: peers come rarely). */
    private volatile ShmPeer[] peerList = new ShmPeer[0];
    /** Some peer's backlog may hold packets (set by a sender, cleared by {@link #flushBacklogs}). */
    volatile boolean backlogged;
    final Path dir;
    final ShmRingFiles files;
    private volatile ShmPeer lastPeer;
    volatile boolean closed;

    /** This device's ring, its receive agent and its consumers; null without an own ring. */
    private final ShmReceiver receiver;
    /** The thread consuming the ring now (the agent or a poller), or null: the single consumer. */
    final AtomicReference<Thread> consumer = new AtomicReference<>();

    final AtomicLong shmSent = new AtomicLong();
    private final AtomicLong shmReceived = new AtomicLong();
    final AtomicLong fullDrops = new AtomicLong();
    private final AtomicLong noRingDrops = new AtomicLong();
    final AtomicLong doorbells = new AtomicLong();
    final AtomicLong laneDrops = new AtomicLong();
    final AtomicLong noLaneFallbacks = new AtomicLong();
    final AtomicLong untrustedRings = new AtomicLong();
    private final AtomicLong ringFailures = new AtomicLong();
    final AtomicLong backlogQueued = new AtomicLong();
    final AtomicLong sendErrors = new AtomicLong();
    final AtomicLong standbys = new AtomicLong();
    final AtomicLong wakeups = new AtomicLong();
    final AtomicLong unwoken = new AtomicLong();
    final AtomicLong burstsSent = new AtomicLong();
    private final AtomicLong burstsReceived = new AtomicLong();
    private final AtomicLong burstsHeld = new AtomicLong();
    final AtomicLong burstDrops = new AtomicLong();

    private ShmLink(InetAddress local, int port, int remotePort, UdpLink.Mode mode, Policy policy, PacketSink sink,
                    Path dir, ShmRingFiles files) throws IOException {
        if (policy == Policy.UDP) {
            throw new IllegalArgumentException("Policy.UDP needs no ShmLink: open a UdpLink");
        }
        this.udp = UdpLink.open(local, port, remotePort, mode, sink);
        this.sink = sink;
        try {
            this.policy = policy;
            this.dir = dir;
            this.files = files;
            this.local = local;
            this.localBytes = local.getAddress();
            this.localGid = Gid.of(local);
            this.port = port;
            this.remotePort = remotePort;
            this.v6 = !(local instanceof Inet4Address);
            ProcessHandle me = ProcessHandle.current();
            this.self = new ShmRing.Identity(me.pid(), ShmRing.processStartMs(me), localGid.bytes(), port);
            this.datagrams = new UdpDatagrams(sink, v6, port, localGid, localBytes);
            ShmLanes lanes = new ShmLanes(datagrams, sink, localGid, localBytes, v6, shmReceived, burstsReceived, burstsHeld);
            ShmRing ring = null;
            DatagramChannel bell = null;
            Selector sel = null;
            try {
                bell = DatagramChannel.open(java.net.StandardProtocolFamily.INET);
                bell.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                bell.configureBlocking(false);
                sel = Selector.open();
                bell.register(sel, SelectionKey.OP_READ);
                int bellPort = ((InetSocketAddress) bell.getLocalAddress()).getPort();
                ring = ShmRing.create(fileFor(dir, localGid, port), self, bellPort, LANES, SLOTS,
                        (CHECK_ICRC ? ShmRing.FLAG_ICRC : 0) | (USE_FUTEX ? ShmRing.FLAG_FUTEX : 0)
                                | (BURSTS ? ShmRing.FLAG_BURSTS : 0), files);
            } catch (IOException | RuntimeException e) {
                closeQuietly(bell);
                closeQuietly(sel);
                bell = null;
                sel = null;
                String why = e instanceof IOException io ? ShmRingFiles.describe(fileFor(dir, localGid, port), io)
                        : fileFor(dir, localGid, port) + ": " + e;
                if (policy == Policy.SHM) {
                    throw new IOException("cannot create the shared-memory ring: " + why
                            + " (link=shm needs it; link=auto would receive over UDP)", e);
                }
                ringFailures.incrementAndGet(); // AUTO: reported, never silent; this device receives over UDP
                LOG.log(System.Logger.Level.WARNING, "no shared-memory ring for " + local.getHostAddress() + " port "
                        + port + ": " + why + "; the device receives over UDP only (shm_ring_failures)");
            }
            this.receiver = ring == null ? null
                    : new ShmReceiver(this, ring, bell, sel, lanes, "shm-" + local.getHostAddress() + "-" + port);
        } catch (IOException | RuntimeException e) {
            udp.close();
            throw e;
        }
    }

    /**
     * Opens the UDP link of {@link UdpLink#open(InetAddress, int, int, UdpLink.Mode, PacketSink)} with a
     * shared-memory path in front ({@code policy} AUTO or SHM). With SHM, IOException if the ring file
     * cannot be made.
     */
    public static ShmLink open(InetAddress local, int port, int remotePort, UdpLink.Mode mode, Policy policy,
                               PacketSink sink) throws IOException {
        return new ShmLink(local, port, remotePort, mode, policy, sink, directory(), ShmRingFiles.FOR_THIS_PROCESS);
    }

    /** As above, with ring files in {@code dir} checked by {@code files} (tests: a private directory, another uid). */
    static ShmLink open(InetAddress local, int port, int remotePort, UdpLink.Mode mode, Policy policy,
                        PacketSink sink, Path dir, ShmRingFiles files) throws IOException {
        return new ShmLink(local, port, remotePort, mode, policy, sink, dir, files);
    }

    /** Where ring files live: {@code rdma4j.shm.dir}, else /dev/shm, else the temporary directory. */
    public static Path directory() {
        String d = System.getProperty("rdma4j.shm.dir");
        if (d != null) {
            return Path.of(d);
        }
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    /** The ring file of the device at {@code gid}, UDP port {@code port}. */
    public static Path fileFor(Gid gid, int port) {
        return fileFor(directory(), gid, port);
    }

    static Path fileFor(Path dir, Gid gid, int port) {
        StringBuilder b = new StringBuilder("rdma4j-");
        for (int i = 0; i < 16; i++) {
            b.append(Character.forDigit((gid.byteAt(i) >> 4) & 0xF, 16)).append(Character.forDigit(gid.byteAt(i) & 0xF, 16));
        }
        return dir.resolve(b.append('-').append(port).append(".ring").toString());
    }

    /** The UDP link behind this one. */
    public UdpLink udp() {
        return udp;
    }

    public Policy policy() {
        return policy;
    }

    /** This device's own ring file, or null if it receives over UDP only. */
    public Path ringFile() {
        return receiver == null ? null : receiver.ringFile();
    }

    // ------------------------------------------------------------------ send

    /**
     * Up to {@link #BURST_PAYLOAD} bytes of packets at {@code mtu} to a peer whose ring this link has
     * mapped and which takes bursts; 1 otherwise (not connected yet, UDP, bursts off on either side).
     */
    @Override
    public int burstLimit(Gid dst, int mtu) {
        if (closed || mtu <= 0 || dst == null) {
            return 1;
        }
        ShmPeer peer = lastPeer;
        if (peer == null || peer.gid != dst) {
            peer = peers.get(dst);
        }
        return peer != null && peer.bursts ? Math.max(1, BURST_PAYLOAD / mtu) : 1;
    }

    @Override
    public void send(Packet p) {
        Gid dst = p.dstGid;
        if (closed || dst == null || dst.isMulticast() || dst.isIpv4Mapped() == v6
                || (remotePort == port && dst.equals(localGid))) {
            if (p.burstPackets > 1) {
                dropBurst(p); // no datagram carries a burst
                return;
            }
            udp.send(p); // it drops what has no route, and loops its own address back
            return;
        }
        ShmPeer peer = lastPeer;
        if (peer == null || peer.gid != dst) {
            peer = peers.computeIfAbsent(dst, this::newPeer);
            lastPeer = peer;
        }
        int r;
        boolean owned = true;
        try {
            boolean noLane;
            synchronized (peer) {
                try {
                    r = peer.offer(p);
                } catch (RuntimeException e) {
                    // never into the engine: count it, forget the ring (it may be unmapped), the transport retries
                    sendErrors.incrementAndGet();
                    peer.disconnect();
                    r = ShmPeer.DROPPED;
                }
                noLane = peer.noLane;
            }
            if (r == ShmPeer.QUEUED) {
                owned = false;
            } else if (r == ShmPeer.NO_RING && p.burstPackets > 1) {
                burstDrops.incrementAndGet(); // the ring went away since burstLimit: the transport resends
            } else if (r == ShmPeer.NO_RING && (policy == Policy.AUTO || noLane)) {
                owned = false;
                udp.send(p);
            } else if (r == ShmPeer.NO_RING) {
                noRingDrops.incrementAndGet();
            }
        } finally {
            if (owned) {
                p.release();
            }
        }
    }

    /** Control path: a new destination, also listed for the receive agent's backlog flush. */
    private ShmPeer newPeer(Gid gid) {
        ShmPeer p = new ShmPeer(this, gid);
        synchronized (peers) {
            ShmPeer[] list = java.util.Arrays.copyOf(peerList, peerList.length + 1);
            list[list.length - 1] = p;
            peerList = list;
        }
        return p;
    }

    /**
     * Writes what the peers' backlogs hold into their lanes while there is room, without waiting (the
     * receive agent and pollers, between their looks at the own ring). True if some backlog still holds packets.
     */
    boolean flushBacklogs() {
        if (!backlogged) {
            return false;
        }
        backlogged = false;
        boolean left = false;
        for (ShmPeer peer : peerList) {
            synchronized (peer) {
                if (!peer.backlog.isEmpty() && !peer.flush(0)) {
                    left = true;
                }
            }
        }
        if (left) {
            backlogged = true;
        }
        return left;
    }

    private void dropBurst(Packet p) {
        burstDrops.incrementAndGet();
        p.release();
    }

    private volatile DatagramChannel bellSender;

    /** The channel doorbells are sent from (made on the first one). */
    DatagramChannel doorbellSender() throws IOException {
        DatagramChannel c = bellSender;
        if (c == null) {
            synchronized (this) {
                c = bellSender;
                if (c == null) {
                    c = DatagramChannel.open(java.net.StandardProtocolFamily.INET);
                    c.configureBlocking(false);
                    bellSender = c;
                }
            }
        }
        return c;
    }

    /** Whether {@code gid}'s IP address is one of this host's (loopback included). */
    static boolean isLocalAddress(Gid gid) {
        try {
            InetAddress a = gid.isIpv4Mapped()
                    ? InetAddress.getByAddress(java.util.Arrays.copyOfRange(gid.bytes(), 12, 16))
                    : InetAddress.getByAddress(gid.bytes());
            return a.isLoopbackAddress() || NetworkInterface.getByInetAddress(a) != null;
        } catch (IOException e) {
            return false;
        }
    }

    // ------------------------------------------------------------------ receive

    /**
     * Receives what is in this device's ring on the calling thread, then what the UDP link has for
     * the caller. Never blocks: if another thread is consuming the ring, it leaves the ring to it.
     */
    @Override
    public int poll() {
        long now = System.nanoTime();
        int n = receiver == null ? 0 : receiver.poll(now);
        flushBacklogs();
        if (udpHot || now - udpPolledNs >= UDP_POLL_NS) {
            udpPolledNs = now;
            int u = udp.poll();
            udpHot = u > 0;
            n += u;
        }
        return n;
    }

    /**
     * A poller looks at the UDP socket (a recvmmsg system call) at most this often while it finds
     * nothing there; every time while it does. Shorter than the UDP link's {@code POLLING_NS}, so the UDP
     * link's agent keeps standing by while a thread polls, and a UDP packet waits at most this long
     * for a poller. Before, every CQ poll made the system call: on a loaded host the poller spent most
     * of a shared-memory stream in it (docs/decisions/0021-shm-receive-agent-sleeps-on-a-futex.md).
     */
    static final long UDP_POLL_NS = 20_000;
    /**
     * While a thread has called {@link #poll()} within this long, the receive agent stands by: it
     * sleeps at once instead of spinning beside the poller (which receives itself), and a sender wakes
     * it as after any sleep, so a packet the poller does not take (it stopped polling to wait on memory,
     * as perftest's write_lat does) waits a wake-up, not a timed park. Timed parks of 50 µs took 110-120
     * µs on this host (the kernel's default 50 µs timer slack), about 60 µs a hop on average.
     */
    static final long POLLING_NS = 50_000;
    /** When a poller last polled the UDP link, and whether it found packets (racy plain fields: a hint). */
    private long udpPolledNs;
    private boolean udpHot;

    @Override
    public void pollerBlocks() {
        if (receiver != null) {
            receiver.pollerBlocks();
        }
        udp.pollerBlocks();
    }

    /**
     * A completion-channel waiter waits in the UDP socket: what comes through the ring is handled by
     * this link's receive agent, and an event it raises ends the wait through {@link #wakeAwait()}.
     */
    @Override
    public int await(long timeoutNs) {
        return udp.await(timeoutNs);
    }

    @Override
    public void wakeAwait() {
        udp.wakeAwait();
    }

    // ------------------------------------------------------------------ the rest: delegation, counters, close

    @Override
    public boolean receiveBacklogged() {
        return udp.receiveBacklogged();
    }

    @Override
    public void joinGroup(Gid group) throws IOException {
        udp.joinGroup(group);
    }

    @Override
    public void leaveGroup(Gid group) {
        udp.leaveGroup(group);
    }

    /** Packets sent through shared memory. */
    public long shmSentPackets() {
        return shmSent.get();
    }

    /** Packets received through shared memory (before their checks). */
    public long shmReceivedPackets() {
        return shmReceived.get();
    }

    /** Packets dropped because the destination's lane stayed full for the whole wait. */
    public long fullDrops() {
        return fullDrops.get();
    }

    @Override
    public long dropped() {
        return udp.dropped() + datagrams.malformed.get() + datagrams.badIcrc.get() + fullDrops.get()
                + noRingDrops.get() + sendErrors.get() + burstDrops.get();
    }

    @Override
    public Map<String, Long> counters() {
        Map<String, Long> m = new TreeMap<>(udp.counters());
        m.put("shm_sent_packets", shmSent.get());
        m.put("shm_received_packets", shmReceived.get());
        m.put("shm_full_drops", fullDrops.get());
        m.put("shm_no_ring_drops", noRingDrops.get());
        m.put("shm_malformed_drops", datagrams.malformed.get());
        m.put("shm_icrc_drops", datagrams.badIcrc.get());
        m.put("shm_doorbells", doorbells.get());
        m.put("shm_lane_failures", laneDrops.get());
        m.put("shm_no_lane_fallbacks", noLaneFallbacks.get());
        m.put("shm_untrusted_rings", untrustedRings.get());
        m.put("shm_ring_failures", ringFailures.get());
        m.put("shm_backlog_queued", backlogQueued.get());
        m.put("shm_send_errors", sendErrors.get());
        m.put("shm_agent_standbys", standbys.get());
        m.put("shm_agent_wakeups", wakeups.get());
        m.put("shm_corrupt_slots", receiver == null ? 0 : receiver.corruptions());
        m.put("shm_responses_unwoken", unwoken.get());
        m.put("shm_bursts_sent", burstsSent.get());
        m.put("shm_bursts_received", burstsReceived.get());
        m.put("shm_bursts_held", burstsHeld.get());
        m.put("shm_burst_drops", burstDrops.get());
        return m;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (receiver != null) {
            receiver.close();
        }
        for (ShmPeer p : peers.values()) {
            synchronized (p) {
                p.disconnect();
                p.backlog.clear();
            }
        }
        closeQuietly(bellSender);
        udp.close();
    }

    static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // closing
            }
        }
    }
}
