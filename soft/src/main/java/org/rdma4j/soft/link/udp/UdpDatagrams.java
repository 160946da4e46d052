// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.link.PacketSink;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Ipv4IcrcSolver;
import org.rdma4j.soft.wire.Ipv6Header;
import org.rdma4j.soft.wire.UdpHeader;
import org.rdma4j.verbs.Gid;

/**
 * What a {@link UdpLink} does with a received datagram, whichever socket it came from: checks it
 * (length, BTH basics, the ICRC over the IP and UDP headers the socket stripped) and hands it to the
 * device, or drops and counts it. Counters are thread safe; each receiving thread has its own
 * {@link Scratch}.
 */
public final class UdpDatagrams {
    /** Room for the TTL and TOS (or hop limit and traffic class) control messages of one datagram. */
    static final long CONTROL_SIZE = 64;

    public final AtomicLong malformed = new AtomicLong();
    public final AtomicLong badIcrc = new AtomicLong();
    private final PacketSink sink;
    private final boolean v6;
    private final int port;
    private final Gid localGid;
    private final byte[] localBytes;

    public UdpDatagrams(PacketSink sink, boolean v6, int port, Gid localGid, byte[] localBytes) {
        this.sink = sink;
        this.v6 = v6;
        this.port = port;
        this.localGid = localGid;
        this.localBytes = localBytes;
    }

    /** Per-receive-thread scratch. */
    public static final class Scratch {
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
     * Checks one unicast datagram (its source as a sockaddr at {@code names}+{@code at}) and queues it in
     * the device's receive batch; anything truncated, malformed or with a bad ICRC is dropped and counted.
     * Never throws.
     */
    void deliver(Packet p, int len, boolean truncated, MemorySegment names, long at, Scratch k) {
        deliver(p, len, truncated, names, at, k, localGid, localBytes, true);
    }

    /** As above, for a datagram sent to {@code dst} (a group, for multicast), batched or not. */
    public void deliver(Packet p, int len, boolean truncated, MemorySegment names, long at, Scratch k,
                        Gid dst, byte[] dstBytes, boolean batched) {
        try {
            if (len == 0 && !truncated) {
                p.release(); // an empty datagram: a wake-up (UdpSocket#wakeReceiver), or nothing to check
                return;
            }
            int payload = truncated || len > Packet.BUFFER_SIZE ? -1 : RoceFramer.checkedPayload(p, len);
            if (payload < 0) {
                drop(p, malformed);
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
                    drop(p, badIcrc);
                    return;
                }
            } else if (family != LinuxSockets.AF_INET
                    || !k.ipv4.verify(toInt(src), toInt(dstBytes), srcPort, port, p.buffer, 0, len)) {
                // The socket hides the IP Identification the ICRC covers: the solver finds the one
                // value that makes the ICRC right, or none if any other covered bit is wrong.
                drop(p, badIcrc);
                return;
            }
            Gid from = k.lastSource;
            if (from == null || !sameAddress(from, src)) {
                from = Gid.of(InetAddress.getByAddress(src));
                k.lastSource = from;
            }
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

    /** Ends the device's receive batch (runs the QPs that got packets). Never throws. */
    void endBatch() {
        try {
            sink.endBatch();
        } catch (Throwable t) {
            malformed.incrementAndGet();
        }
    }

    private static void drop(Packet p, AtomicLong counter) {
        counter.incrementAndGet();
        p.release();
    }

    /** Reads the IP_TTL/IP_TOS (IPV6_HOPLIMIT/IPV6_TCLASS) control messages of one datagram into {@code p}. */
    static void readHopLimitAndClass(MemorySegment controls, long at, long length, Packet p) {
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

    static int toInt(byte[] a) {
        return (a[0] & 0xFF) << 24 | (a[1] & 0xFF) << 16 | (a[2] & 0xFF) << 8 | (a[3] & 0xFF);
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
}
