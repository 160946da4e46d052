// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Ipv4Header;
import org.rdma4j.soft.wire.Ipv6Header;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.UdpHeader;

/**
 * The soft device's one RoCEv2 framer, for the UDP link (its datagrams, its packets to its own address)
 * and the shared-memory link (its ring entries): a {@link Packet} into the bytes a datagram carries from
 * the BTH on (headers, payload, pad, and the ICRC over them and the IP and UDP headers the datagram has
 * or would have: {@link #bthOnwardLength}, {@link #copyBthOnward}, {@link #frame}), and such bytes back
 * into a packet ({@link #checkedPayload}: the checks every received datagram and ring entry passes
 * before its ICRC). Allocation free. An instance is not thread safe: one under the UDP link's send lock,
 * one per thread delivering to the link's own address, one per shared-memory peer.
 */
public final class RoceFramer {
    /** {@link #bthOnwardLength}: the packet's own ICRC is wrong (corrupted before it reached the link). */
    public static final int BAD_ICRC = -1;
    /** {@link #bthOnwardLength}: too long for one datagram. */
    public static final int TOO_LONG = -2;

    public final Icrc icrc = new Icrc();
    final Ipv4Header ip4 = new Ipv4Header();
    final Ipv6Header ip6 = new Ipv6Header();
    final UdpHeader udp = new UdpHeader();
    /** Where the headers go when they are only for the ICRC. */
    public final MemorySegment pseudo = Arena.ofAuto().allocate(64, 8);
    private final boolean v6;
    private final byte[] localBytes;
    private final int port;

    /** A framer of datagrams from {@code localBytes} (4 or 16 bytes, as {@code v6} says), UDP port {@code port}. */
    public RoceFramer(boolean v6, byte[] localBytes, int port) {
        this.v6 = v6;
        this.localBytes = localBytes;
        this.port = port;
    }

    /** The hop limit (TTL) {@code p} leaves with: its own, or the default if it has none. */
    public static int hopLimitOf(Packet p) {
        return p.hopLimit == 0 ? Packet.DEFAULT_HOP_LIMIT : p.hopLimit & 0xFF;
    }

    /**
     * How many bytes {@code p} takes from the BTH on (headers, payload, pad, ICRC), or why it cannot
     * leave: {@link #BAD_ICRC} (it carries an ICRC of its own, from fault injection in front of the link,
     * and that is wrong: a NIC would drop it) or {@link #TOO_LONG}.
     */
    public int bthOnwardLength(Packet p) {
        if (p.hasIcrc && !icrc.verifyBthOnward(p.buffer, 0, p.headerLength + p.payloadLength + Icrc.LENGTH)) {
            return BAD_ICRC;
        }
        int pad = (4 - (p.payloadLength & 3)) & 3;
        int bthLength = p.headerLength + p.payloadLength + pad + Icrc.LENGTH;
        return bthLength > Packet.BUFFER_SIZE ? TOO_LONG : bthLength;
    }

    /**
     * Copies {@code p}'s headers and payload to {@code to} at {@code at} and zeroes the pad after them,
     * up to where the ICRC of its {@code bthLength} bytes ({@link #bthOnwardLength}) goes. Throws
     * IllegalStateException if the payload's memory was freed meanwhile.
     */
    public static void copyBthOnward(Packet p, MemorySegment to, long at, int bthLength) {
        int hl = p.headerLength;
        int len = p.payloadLength;
        MemorySegment.copy(p.buffer, 0, to, at, hl);
        p.copyPayload(0, to, at + hl, len);
        zeroPad(to, at + hl + len, at + bthLength - Icrc.LENGTH);
    }

    /** As {@link #copyBthOnward} for a packet whose payload is in its buffer (materialized): the pad, in place. */
    public static void padInPlace(Packet p, int bthLength) {
        zeroPad(p.buffer, p.headerLength + p.payloadLength, bthLength - Icrc.LENGTH);
    }

    private static void zeroPad(MemorySegment to, long from, long end) {
        for (long i = from; i < end; i++) {
            to.set(ValueLayout.JAVA_BYTE, i, (byte) 0);
        }
    }

    /**
     * Writes the IP and UDP headers of a datagram from this framer's address and port to {@code dst}
     * port {@code dstPort} into {@code ipOut} (the datagram's own in raw mode, else {@link #pseudo} for
     * the ICRC only), and the ICRC over them and the {@code bthLength} bytes at {@code bth} into its
     * place at their end.
     */
    public void frame(MemorySegment ipOut, byte[] dst, int dstPort, int tos, int ttl, int ipv4Id,
                      MemorySegment bthOnward, long bth, int bthLength) {
        int udpLength = UdpHeader.LENGTH + bthLength;
        MemorySegment ipSeg;
        if (v6) {
            ipSeg = ip6.wrap(ipOut, 0).writeUdp(tos, 0, udpLength, ttl).sourceAddress(localBytes, 0)
                    .destinationAddress(dst, 0).segment();
            udp.wrap(ipSeg, Ipv6Header.LENGTH).write(port, dstPort, udpLength, 0);
        } else {
            ipSeg = ip4.wrap(ipOut, 0).writeUdp(tos, Ipv4Header.LENGTH + udpLength, ipv4Id, true, ttl,
                    UdpDatagrams.toInt(localBytes), UdpDatagrams.toInt(dst)).segment(); // checksum set
            udp.wrap(ipSeg, Ipv4Header.LENGTH).write(port, dstPort, udpLength, 0);
        }
        int crc = icrc.compute(ipSeg, 0, bthOnward, bth, bthLength);
        Icrc.write(bthOnward, bth + bthLength - Icrc.LENGTH, crc);
    }

    /**
     * Checks the {@code len} bytes (BTH onward, at most {@link Packet#BUFFER_SIZE}) in {@code p}'s buffer
     * as a RoCE packet, as rxe does before the ICRC: long enough, a known opcode, transport version 0, a
     * payload length the opcode allows. Returns the payload's length, with {@link Packet#headerLength}
     * set, or -1 if they are malformed. The caller checks the ICRC (or not) and sets the payload.
     */
    public static int checkedPayload(Packet p, int len) {
        if (len < Bth.LENGTH + Icrc.LENGTH) {
            return -1;
        }
        int op = Bth.opcodeOf(p.buffer);
        int hl = Opcode.headerLength(op);
        int pad = (p.buffer.get(ValueLayout.JAVA_BYTE, 1) >>> 4) & 3;
        int payload = len - hl - pad - Icrc.LENGTH;
        if (!Opcode.isValid(op) || Bth.tverOf(p.buffer) != 0 || payload < 0 || payload > Packet.MAX_PAYLOAD
                || (!Opcode.hasPayload(op) && payload + pad != 0)) {
            return -1;
        }
        p.headerLength = hl;
        return payload;
    }
}
