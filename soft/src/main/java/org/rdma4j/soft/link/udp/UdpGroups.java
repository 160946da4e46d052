// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.soft.agent.Agent;
import org.rdma4j.soft.agent.AgentRunner;
import org.rdma4j.soft.agent.IdleStrategy;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.verbs.Gid;

/**
 * The multicast groups a {@link UdpLink} (libc socket modes) has joined, as rxe joins them: the IPv4
 * group for an IPv4-mapped GID, else the IPv6 group, on the interface of the local address. A socket
 * bound to group:port (SO_REUSEADDR, so several devices on one host can join) receives each group; one
 * agent polls all of them and hands datagrams to the device one by one. Thread safe.
 */
final class UdpGroups implements Agent {
    /** How long the agent sleeps with no group joined. */
    private static final long NO_GROUP_WAIT_NS = 20_000_000L;

    /** A joined multicast group and the socket that receives it. */
    private record Group(Gid gid, byte[] address, int fd) {
    }

    private final boolean v6;
    private final int port;
    private final byte[] localBytes;
    private final int interfaceIndex;
    private final String localName;
    private final PacketPool pool;
    private final UdpDatagrams datagrams;
    private final Map<Gid, Group> groups = new HashMap<>(); // guarded by this
    private volatile Group[] snapshot = new Group[0];
    private final ConcurrentLinkedQueue<Integer> fdsToClose = new ConcurrentLinkedQueue<>();
    private AgentRunner runner; // guarded by this
    private boolean closed; // guarded by this

    // The agent's thread only.
    private final LinuxSockets.Call call = new LinuxSockets.Call();
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment vector = arena.allocate(LinuxSockets.MMSGHDR_SIZE, 8);
    private final MemorySegment iovec = arena.allocate(LinuxSockets.IOVEC_SIZE, 8);
    private final MemorySegment name = arena.allocate(LinuxSockets.SOCKADDR_SIZE, 8);
    private final MemorySegment control = arena.allocate(UdpDatagrams.CONTROL_SIZE, 8);
    private MemorySegment pollFds = arena.allocate(8L * 64, 8);
    private final UdpDatagrams.Scratch scratch = new UdpDatagrams.Scratch();

    UdpGroups(boolean v6, int port, byte[] localBytes, int interfaceIndex, String localName, PacketPool pool,
              UdpDatagrams datagrams) {
        this.v6 = v6;
        this.port = port;
        this.localBytes = localBytes;
        this.interfaceIndex = interfaceIndex;
        this.localName = localName;
        this.pool = pool;
        this.datagrams = datagrams;
    }

    @Override
    public String roleName() {
        return "udp-mcast-" + localName;
    }

    /** Joins {@code group} (nothing if joined already); the first group starts the agent's thread. */
    synchronized void join(Gid group) throws IOException {
        if (closed) {
            throw new IOException("the link is closed");
        }
        if (groups.containsKey(group)) {
            return;
        }
        LinuxSockets.Call c = new LinuxSockets.Call();
        byte[] address = v6 ? group.bytes() : Arrays.copyOfRange(group.bytes(), 12, 16);
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
            LinuxSockets.setOption(c, gfd, v6 ? LinuxSockets.IPPROTO_IPV6 : LinuxSockets.IPPROTO_IP,
                    v6 ? LinuxSockets.IPV6_JOIN_GROUP : LinuxSockets.IP_ADD_MEMBERSHIP, membership(address));
            try {
                LinuxSockets.setIntOption(c, gfd, v6 ? LinuxSockets.IPPROTO_IPV6 : LinuxSockets.IPPROTO_IP,
                        v6 ? LinuxSockets.IPV6_MULTICAST_ALL : LinuxSockets.IP_MULTICAST_ALL, 0);
            } catch (IOException older) {
                // bound to the group address anyway
            }
            NativeUdpSocket.askForHopLimitAndClass(c, gfd, v6);
            LinuxSockets.setReceiveTimeout(c, gfd, 100_000);
        } catch (IOException e) {
            LinuxSockets.close(gfd);
            throw e;
        }
        groups.put(group, new Group(group, address, gfd));
        snapshot = groups.values().toArray(new Group[0]);
        if (runner == null) {
            runner = AgentRunner.start(this, IdleStrategy.parkUntil(() -> snapshot.length == 0 ? NO_GROUP_WAIT_NS : 0),
                    t -> {
                        // One failed call (a socket closed under us, a downcall error) must not end multicast
                        // for the link: count it, back off a moment, poll again.
                        datagrams.malformed.incrementAndGet();
                        LockSupport.parkNanos(1_000_000L);
                    });
        }
    }

    /** ip_mreq (group, local address) or ipv6_mreq (group, interface index). */
    private byte[] membership(byte[] address) {
        if (v6) {
            byte[] mreq = Arrays.copyOf(address, 20);
            ByteBuffer.wrap(mreq, 16, 4).order(ByteOrder.nativeOrder()).putInt(interfaceIndex);
            return mreq;
        }
        byte[] mreq = Arrays.copyOf(address, 8);
        System.arraycopy(localBytes, 0, mreq, 4, 4);
        return mreq;
    }

    /** Leaves {@code group} now; the agent closes its socket once it no longer polls it. */
    synchronized void leave(Gid group) {
        Group g = groups.remove(group);
        if (g == null) {
            return;
        }
        snapshot = groups.values().toArray(new Group[0]);
        try {
            LinuxSockets.setOption(new LinuxSockets.Call(), g.fd(),
                    v6 ? LinuxSockets.IPPROTO_IPV6 : LinuxSockets.IPPROTO_IP,
                    v6 ? LinuxSockets.IPV6_LEAVE_GROUP : LinuxSockets.IP_DROP_MEMBERSHIP, membership(g.address()));
        } catch (IOException e) {
            // closing the socket leaves the group too
        }
        fdsToClose.add(g.fd());
    }

    /** One poll of every group socket (up to 50 ms); returns the datagrams handed to the device. */
    @Override
    public int doWork() {
        closeLeft();
        Group[] gs = snapshot;
        if (gs.length == 0) {
            return 0;
        }
        if (pollFds.byteSize() < 8L * gs.length) {
            pollFds = arena.allocate(8L * gs.length, 8);
        }
        for (int i = 0; i < gs.length; i++) {
            pollFds.set(ValueLayout.JAVA_INT, 8L * i, gs[i].fd());
            pollFds.set(ValueLayout.JAVA_SHORT, 8L * i + 4, LinuxSockets.POLLIN);
            pollFds.set(ValueLayout.JAVA_SHORT, 8L * i + 6, (short) 0);
        }
        if (LinuxSockets.poll(call, pollFds, gs.length, 50) <= 0) {
            return 0;
        }
        int work = 0;
        for (int i = 0; i < gs.length; i++) {
            if ((pollFds.get(ValueLayout.JAVA_SHORT, 8L * i + 6) & LinuxSockets.POLLIN) != 0 && receiveOne(gs[i])) {
                work++;
            }
        }
        return work;
    }

    private boolean receiveOne(Group g) {
        Packet p = pool.acquire();
        iovec.set(ValueLayout.JAVA_LONG, 0, p.buffer.address());
        iovec.set(ValueLayout.JAVA_LONG, 8, Packet.BUFFER_SIZE);
        vector.set(ValueLayout.JAVA_LONG, 0, name.address());
        vector.set(ValueLayout.JAVA_LONG, 8, LinuxSockets.SOCKADDR_SIZE);
        vector.set(ValueLayout.JAVA_LONG, 16, iovec.address());
        vector.set(ValueLayout.JAVA_LONG, 24, 1);
        vector.set(ValueLayout.JAVA_LONG, 32, control.address());
        vector.set(ValueLayout.JAVA_LONG, 40, UdpDatagrams.CONTROL_SIZE);
        vector.set(ValueLayout.JAVA_LONG, 48, 0);
        int got;
        try {
            got = LinuxSockets.recvmmsg(call, g.fd(), vector, 1);
        } catch (Throwable t) {
            p.release();
            throw t;
        }
        if (got != 1) {
            p.release();
            return false;
        }
        UdpDatagrams.readHopLimitAndClass(control, 0, vector.get(ValueLayout.JAVA_LONG, 40), p);
        datagrams.deliver(p, vector.get(ValueLayout.JAVA_INT, 56), (vector.get(ValueLayout.JAVA_INT, 48) & 0x20) != 0,
                name, 0, scratch, g.gid(), g.address(), false);
        return true;
    }

    private void closeLeft() {
        Integer stale;
        while ((stale = fdsToClose.poll()) != null) {
            LinuxSockets.close(stale);
        }
    }

    @Override
    public void onClose() {
        closeLeft();
    }

    /** Leaves every group and stops the agent, waiting up to 2 s for its thread. */
    void close() {
        AgentRunner r;
        synchronized (this) {
            closed = true;
            for (Group g : groups.values()) {
                fdsToClose.add(g.fd());
            }
            groups.clear();
            snapshot = new Group[0];
            r = runner;
        }
        if (r != null) {
            r.close(2_000);
        } else {
            closeLeft();
        }
    }
}
