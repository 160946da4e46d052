// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.BYTE;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.zip.CRC32;

/**
 * Computes and checks the RoCEv2 invariant CRC, the 4 bytes that end every packet.
 *
 * <p>The ICRC is the standard CRC-32 ({@link CRC32}) over
 * <pre>
 *   8 x 0xFF                      (stands in for the InfiniBand LRH)
 *   IP header                     IPv4: TOS, TTL, header checksum all ones;
 *                                 IPv6: traffic class, flow label, hop limit all ones
 *   UDP header                    checksum all ones
 *   BTH                           byte 4 (FECN, BECN, reserved) all ones
 *   extension headers, payload, pad
 * </pre>
 * and is stored least-significant byte first. Everything a router may rewrite is masked; IPv4
 * Total Length and Identification are not, so they must be final before the ICRC is computed.
 * These rules reproduce the ICRC of every packet captured from Linux rxe.
 *
 * <p>Every {@code length} argument here runs from the start of the named header through the
 * 4 ICRC bytes, so it is the IP datagram length for whole packets and the UDP length minus 8 for
 * BTH-onward data. To stamp a packet:
 * {@snippet :
 * int icrc = crc.computeIpv4(packet, ipOffset, ipTotalLength);
 * Icrc.write(packet, ipOffset + ipTotalLength - Icrc.LENGTH, icrc);
 * }
 *
 * <p>Allocation-free: each instance reuses one {@link CRC32} and two scratch arrays; masked
 * headers are copied into the first, payload streams through the second.
 * The {@code compute*} methods throw {@link IllegalArgumentException} for lengths too short to
 * hold the headers (a sender's bug); the {@code verify*} methods never throw and answer false for
 * anything malformed.
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class Icrc {
    /** Length of the ICRC in bytes. */
    public static final int LENGTH = 4;

    private static final ValueLayout.OfInt LITTLE_ENDIAN_INT =
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int LRH_MASK_LENGTH = 8;
    private static final int MAX_IPV4_HEADER = 60;
    private static final int MIN_BTH_ONWARD = Bth.LENGTH + LENGTH;
    private static final byte ONES = (byte) 0xFF;
    private static final int CHUNK_LENGTH = 4096;

    private final CRC32 crc = new CRC32();
    private final byte[] headers = new byte[LRH_MASK_LENGTH + MAX_IPV4_HEADER + UdpHeader.LENGTH + Bth.LENGTH];
    private final byte[] chunk = new byte[CHUNK_LENGTH];

    /** Creates an ICRC engine with its own scratch space. */
    public Icrc() {
        for (int i = 0; i < LRH_MASK_LENGTH; i++) {
            headers[i] = ONES;
        }
    }

    /**
     * ICRC of a whole IPv4 RoCEv2 packet (IPv4 header, options if any, UDP, BTH onward).
     *
     * @param packet       holds the packet
     * @param ipOffset     where the IPv4 header starts
     * @param packetLength bytes from {@code ipOffset} through the ICRC (the IPv4 Total Length)
     * @return the ICRC
     */
    public int computeIpv4(MemorySegment packet, long ipOffset, int packetLength) {
        int ipHeaderLength = (packet.get(BYTE, ipOffset) & 0x0F) * 4;
        if (ipHeaderLength < Ipv4Header.LENGTH) {
            throw new IllegalArgumentException("IPv4 IHL below 5");
        }
        return crc(packet, ipOffset, Ipv4Header.VERSION, ipHeaderLength, packet,
                ipOffset + ipHeaderLength + UdpHeader.LENGTH, bthLength(packetLength, ipHeaderLength));
    }

    /**
     * ICRC of a whole IPv6 RoCEv2 packet (fixed header directly followed by UDP).
     *
     * @param packet       holds the packet
     * @param ipOffset     where the IPv6 header starts
     * @param packetLength bytes from {@code ipOffset} through the ICRC (40 + Payload Length)
     * @return the ICRC
     */
    public int computeIpv6(MemorySegment packet, long ipOffset, int packetLength) {
        return crc(packet, ipOffset, Ipv6Header.VERSION, Ipv6Header.LENGTH, packet,
                ipOffset + Ipv6Header.LENGTH + UdpHeader.LENGTH, bthLength(packetLength, Ipv6Header.LENGTH));
    }

    /**
     * ICRC of a packet whose IP and UDP headers are built apart from its BTH-onward bytes, as a
     * link does when it hands headers and payload to the kernel separately.
     *
     * @param ipUdp     holds the IP header (version taken from its first nibble) directly followed by UDP
     * @param ipOffset  where the IP header starts
     * @param bthOnward holds the BTH, extension headers, payload, pad and room for the ICRC
     * @param bthOffset where the BTH starts
     * @param bthLength bytes from the BTH through the ICRC (the UDP length minus 8)
     * @return the ICRC
     */
    public int compute(MemorySegment ipUdp, long ipOffset, MemorySegment bthOnward, long bthOffset, int bthLength) {
        int first = ipUdp.get(BYTE, ipOffset) & 0xFF;
        int version = first >>> 4;
        int ipHeaderLength = switch (version) {
            case Ipv4Header.VERSION -> Math.max(Ipv4Header.LENGTH, (first & 0x0F) * 4);
            case Ipv6Header.VERSION -> Ipv6Header.LENGTH;
            default -> throw new IllegalArgumentException("not an IPv4 or IPv6 header: version " + version);
        };
        if (bthLength < MIN_BTH_ONWARD) {
            throw new IllegalArgumentException("bthLength " + bthLength + " < " + MIN_BTH_ONWARD);
        }
        return crc(ipUdp, ipOffset, version, ipHeaderLength, bthOnward, bthOffset, bthLength);
    }

    /**
     * ICRC over BTH-onward bytes alone, behind an 8-byte all-ones pseudo header and with BTH byte 4
     * masked. Only for packets that travel between soft devices inside one JVM, where there is no
     * IP or UDP header; no other RoCE implementation computes or accepts this value.
     *
     * @param packet    holds the packet
     * @param bthOffset where the BTH starts
     * @param bthLength bytes from the BTH through the ICRC
     * @return the ICRC
     */
    public int computeBthOnward(MemorySegment packet, long bthOffset, int bthLength) {
        if (bthLength < MIN_BTH_ONWARD) {
            throw new IllegalArgumentException("bthLength " + bthLength + " < " + MIN_BTH_ONWARD);
        }
        return crc(null, 0, 0, 0, packet, bthOffset, bthLength);
    }

    /**
     * Checks the ICRC of a whole IPv4 RoCEv2 packet.
     *
     * @param packet       holds the packet
     * @param ipOffset     where the IPv4 header starts
     * @param packetLength bytes from {@code ipOffset} through the ICRC, as received
     * @return whether the packet is a well-formed IPv4/UDP packet whose last 4 bytes are its ICRC
     */
    public boolean verifyIpv4(MemorySegment packet, long ipOffset, int packetLength) {
        if (!inBounds(packet, ipOffset, packetLength, Ipv4Header.LENGTH)) {
            return false;
        }
        int first = packet.get(BYTE, ipOffset) & 0xFF;
        int ipHeaderLength = (first & 0x0F) * 4;
        if (first >>> 4 != Ipv4Header.VERSION || ipHeaderLength < Ipv4Header.LENGTH
                || packetLength < ipHeaderLength + UdpHeader.LENGTH + MIN_BTH_ONWARD
                || (packet.get(BYTE, ipOffset + Ipv4Header.PROTOCOL_OFFSET) & 0xFF) != Ipv4Header.PROTOCOL_UDP) {
            return false;
        }
        return crc(packet, ipOffset, Ipv4Header.VERSION, ipHeaderLength, packet,
                ipOffset + ipHeaderLength + UdpHeader.LENGTH, packetLength - ipHeaderLength - UdpHeader.LENGTH)
                == read(packet, ipOffset + packetLength - LENGTH);
    }

    /**
     * Checks the ICRC of a whole IPv6 RoCEv2 packet.
     *
     * @param packet       holds the packet
     * @param ipOffset     where the IPv6 header starts
     * @param packetLength bytes from {@code ipOffset} through the ICRC, as received
     * @return whether the packet is a well-formed IPv6/UDP packet whose last 4 bytes are its ICRC
     */
    public boolean verifyIpv6(MemorySegment packet, long ipOffset, int packetLength) {
        int minimum = Ipv6Header.LENGTH + UdpHeader.LENGTH + MIN_BTH_ONWARD;
        if (!inBounds(packet, ipOffset, packetLength, minimum)
                || (packet.get(BYTE, ipOffset) & 0xF0) >>> 4 != Ipv6Header.VERSION
                || (packet.get(BYTE, ipOffset + Ipv6Header.NEXT_HEADER_OFFSET) & 0xFF) != Ipv6Header.NEXT_HEADER_UDP) {
            return false;
        }
        return crc(packet, ipOffset, Ipv6Header.VERSION, Ipv6Header.LENGTH, packet,
                ipOffset + Ipv6Header.LENGTH + UdpHeader.LENGTH, packetLength - Ipv6Header.LENGTH - UdpHeader.LENGTH)
                == read(packet, ipOffset + packetLength - LENGTH);
    }

    /**
     * Checks the ICRC of a whole packet of either IP version, chosen by its first nibble.
     *
     * @param packet       holds the packet
     * @param ipOffset     where the IP header starts
     * @param packetLength bytes from {@code ipOffset} through the ICRC, as received
     * @return whether the ICRC is right; false for anything malformed
     */
    public boolean verify(MemorySegment packet, long ipOffset, int packetLength) {
        if (!inBounds(packet, ipOffset, packetLength, 1)) {
            return false;
        }
        return switch ((packet.get(BYTE, ipOffset) & 0xF0) >>> 4) {
            case Ipv4Header.VERSION -> verifyIpv4(packet, ipOffset, packetLength);
            case Ipv6Header.VERSION -> verifyIpv6(packet, ipOffset, packetLength);
            default -> false;
        };
    }

    /**
     * Checks an ICRC made by {@link #computeBthOnward}.
     *
     * @param packet    holds the packet
     * @param bthOffset where the BTH starts
     * @param bthLength bytes from the BTH through the ICRC
     * @return whether the last 4 bytes are the ICRC of the rest
     */
    public boolean verifyBthOnward(MemorySegment packet, long bthOffset, int bthLength) {
        return inBounds(packet, bthOffset, bthLength, MIN_BTH_ONWARD)
                && crc(null, 0, 0, 0, packet, bthOffset, bthLength) == read(packet, bthOffset + bthLength - LENGTH);
    }

    /**
     * {@return the ICRC, decoded least-significant byte first}
     *
     * @param segment holds the ICRC
     * @param offset  where its 4 bytes start
     */
    public static int read(MemorySegment segment, long offset) {
        return segment.get(LITTLE_ENDIAN_INT, offset);
    }

    /**
     * Sets receives the ICRC.
     *
     * @param segment receives the ICRC
     * @param offset  where its 4 bytes go (the last 4 bytes of the packet)
     * @param icrc    the ICRC, stored least-significant byte first
     */
    public static void write(MemorySegment segment, long offset, int icrc) {
        segment.set(LITTLE_ENDIAN_INT, offset, icrc);
    }

    /**
     * The recipe. A null {@code ip} leaves out IP and UDP (the in-JVM variant).
     * {@code bthLength} includes the ICRC itself, which is not covered.
     */
    private int crc(MemorySegment ip, long ipOffset, int version, int ipHeaderLength,
                    MemorySegment bth, long bthOffset, int bthLength) {
        byte[] h = headers;
        int at = LRH_MASK_LENGTH;
        if (ip != null) {
            MemorySegment.copy(ip, BYTE, ipOffset, h, at, ipHeaderLength + UdpHeader.LENGTH);
            if (version == Ipv4Header.VERSION) {
                h[at + Ipv4Header.TOS_OFFSET] = ONES;
                h[at + Ipv4Header.TTL_OFFSET] = ONES;
                h[at + Ipv4Header.CHECKSUM_OFFSET] = ONES;
                h[at + Ipv4Header.CHECKSUM_OFFSET + 1] = ONES;
            } else {
                // Traffic class and flow label are the 28 bits after the version nibble.
                h[at] |= 0x0F;
                h[at + 1] = ONES;
                h[at + 2] = ONES;
                h[at + 3] = ONES;
                h[at + Ipv6Header.HOP_LIMIT_OFFSET] = ONES;
            }
            at += ipHeaderLength;
            h[at + UdpHeader.CHECKSUM_OFFSET] = ONES;
            h[at + UdpHeader.CHECKSUM_OFFSET + 1] = ONES;
            at += UdpHeader.LENGTH;
        }
        MemorySegment.copy(bth, BYTE, bthOffset, h, at, Bth.LENGTH);
        h[at + Bth.ECN_OFFSET] = ONES;
        at += Bth.LENGTH;

        crc.reset();
        crc.update(h, 0, at);
        long from = bthOffset + Bth.LENGTH;
        int remaining = bthLength - Bth.LENGTH - LENGTH;
        while (remaining > 0) {
            int n = Math.min(remaining, CHUNK_LENGTH);
            MemorySegment.copy(bth, BYTE, from, chunk, 0, n);
            crc.update(chunk, 0, n);
            from += n;
            remaining -= n;
        }
        return (int) crc.getValue();
    }

    private static int bthLength(int packetLength, int ipHeaderLength) {
        int bthLength = packetLength - ipHeaderLength - UdpHeader.LENGTH;
        if (bthLength < MIN_BTH_ONWARD) {
            throw new IllegalArgumentException("packetLength " + packetLength + " too short for "
                    + ipHeaderLength + "-byte IP header, UDP, BTH and ICRC");
        }
        return bthLength;
    }

    private static boolean inBounds(MemorySegment segment, long offset, int length, int minimum) {
        return length >= minimum && offset >= 0 && offset <= segment.byteSize() - length;
    }
}
