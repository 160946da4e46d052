// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.verbs.Gid;

/**
 * The UDP link's loopback, as rxe's: a unicast packet to the link's own address is framed in place
 * (payload materialized, pad, the ICRC over the IP and UDP headers it would have had, from and to the
 * link's port) and handed to the device's receive path on the sending thread, through the checks every
 * received datagram passes ({@link UdpDatagrams}). Nothing is sent. Thread safe: each sending thread
 * has its own scratch.
 */
final class UdpSelfDelivery {
    private final UdpSocket socket;
    private final UdpDatagrams datagrams;
    private final byte[] localBytes;
    private final int port;
    private final Gid localGid;
    /** Where a packet too long for a datagram is counted (the link's drops). */
    private final AtomicLong dropped;
    /** Per sending thread: what delivering a packet to the link's own address needs. */
    private final ThreadLocal<Scratch> scratch;
    final AtomicLong delivered = new AtomicLong();

    UdpSelfDelivery(UdpSocket socket, UdpDatagrams datagrams, boolean v6, byte[] localBytes, int port, Gid localGid,
                    AtomicLong dropped) {
        this.socket = socket;
        this.datagrams = datagrams;
        this.localBytes = localBytes;
        this.port = port;
        this.localGid = localGid;
        this.dropped = dropped;
        this.scratch = ThreadLocal.withInitial(() -> new Scratch(v6, localBytes, port));
    }

    /**
     * Delivers {@code p}, a unicast packet to the link's own address, to its own device. Takes
     * ownership of {@code p}; throws IllegalStateException (after releasing it) if the sender's memory
     * it carries was freed.
     */
    void deliver(Packet p) {
        Scratch k = scratch.get();
        int bthLength;
        try {
            bthLength = UdpSendStage.bthOnwardLength(p, k.framer, datagrams, dropped);
            if (bthLength < 0) {
                p.release();
                return;
            }
            p.materialize(); // copies from the sender's memory: fails if it was freed (the caller counts it)
        } catch (RuntimeException e) {
            p.release();
            throw e;
        }
        RoceFramer.padInPlace(p, bthLength);
        int ttl = RoceFramer.hopLimitOf(p);
        int tos = p.trafficClass & 0xFF;
        int ipv4Id = socket.ipHeaderLength() > 0 ? UdpSendStage.IPV4_ID : 0;
        k.framer.frame(k.framer.pseudo, localBytes, port, tos, ttl, ipv4Id, p.buffer, 0, bthLength);
        // What a receiver of this datagram reads: the hop limit and class it was sent with (no router
        // in between), no flow label (not carried over UDP), and no BTH-onward ICRC (the real one is in).
        p.hopLimit = ttl;
        p.trafficClass = tos;
        p.flowLabel = 0;
        p.hasIcrc = false;
        LinuxSockets.writeSockaddr(k.source, localBytes, port);
        delivered.incrementAndGet();
        datagrams.deliver(p, bthLength, false, k.source, 0, k.receive, localGid, localBytes, false);
    }

    /** One thread's scratch for the link's delivery to its own address. */
    private static final class Scratch {
        final RoceFramer framer;
        final UdpDatagrams.Scratch receive = new UdpDatagrams.Scratch();
        /** The packet's source as a sockaddr, as the socket would report it. */
        final MemorySegment source = Arena.ofAuto().allocate(LinuxSockets.SOCKADDR_SIZE, 8);

        Scratch(boolean v6, byte[] localBytes, int port) {
            framer = new RoceFramer(v6, localBytes, port);
        }
    }
}
