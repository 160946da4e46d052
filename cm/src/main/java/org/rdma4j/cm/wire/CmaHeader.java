// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The 36-byte header rdma_cm puts first in the private data of a REQ (and of a SIDR_REQ) for the IP
 * port spaces, so that the passive side learns the addresses and the source port of an IP connection.
 *
 * <pre>
 *   0 CMA version (0)   1 IP version[7:4] (4 or 6)   2 source port (16)
 *   4 source address (128; IPv4: 12 zero bytes, then the 4 address bytes)
 *  20 destination address (128; same form)
 * </pre>
 *
 * <p>Static accessors over a segment and the offset where the header starts (in a REQ:
 * {@link CmReq#PRIVATE_DATA_OFFSET}). Stateless; thread safe.
 */
public final class CmaHeader {
    /** Length of the header. */
    public static final int LENGTH = 36;
    /** Offset of the version byte. */
    public static final int VERSION_OFFSET = 0;
    /** Offset of the byte with the IP version in its high nibble. */
    public static final int IP_VERSION_OFFSET = 1;
    /** Offset of the source port. */
    public static final int PORT_OFFSET = 2;
    /** Offset of the source address. */
    public static final int SRC_ADDR_OFFSET = 4;
    /** Offset of the destination address. */
    public static final int DST_ADDR_OFFSET = 20;
    /** The only version rdma_cm writes. */
    public static final int CMA_VERSION = 0;
    /** What a REQ's private data can carry after the header (92 - 36). */
    public static final int REQ_USER_DATA_LENGTH = CmReq.PRIVATE_DATA_LENGTH - LENGTH;
    /** What a SIDR_REQ's private data can carry after the header (216 - 36). */
    public static final int SIDR_REQ_USER_DATA_LENGTH = SidrReq.PRIVATE_DATA_LENGTH - LENGTH;

    private CmaHeader() {
    }

    /**
     * Writes a header for a connection from {@code src}:{@code srcPort} to {@code dst}; both addresses
     * must be of the same family.
     *
     * @param seg the segment
     * @param at where the header starts
     * @param src the source address
     * @param srcPort the source port
     * @param dst the destination address
     */
    public static void write(MemorySegment seg, long at, InetAddress src, int srcPort, InetAddress dst) {
        if ((src instanceof Inet4Address) != (dst instanceof Inet4Address)) {
            throw new IllegalArgumentException("source and destination of different IP versions: " + src + ", " + dst);
        }
        seg.set(Be.BYTE, at + VERSION_OFFSET, (byte) CMA_VERSION);
        seg.set(Be.BYTE, at + IP_VERSION_OFFSET, (byte) ((src instanceof Inet4Address ? 4 : 6) << 4));
        seg.set(Be.SHORT, at + PORT_OFFSET, (short) srcPort);
        writeAddr(seg, at + SRC_ADDR_OFFSET, src);
        writeAddr(seg, at + DST_ADDR_OFFSET, dst);
    }

    private static void writeAddr(MemorySegment seg, long at, InetAddress a) {
        byte[] b = a.getAddress();
        seg.asSlice(at, 16).fill((byte) 0);
        MemorySegment.copy(b, 0, seg, Be.BYTE, at + 16 - b.length, b.length);
    }

    /**
     * {@return the version byte}
     *
     * @param seg the segment
     * @param at the header
     */
    public static int version(MemorySegment seg, long at) {
        return seg.get(Be.BYTE, at + VERSION_OFFSET) & 0xFF;
    }

    /**
     * {@return the IP version (4 or 6 when valid)}
     *
     * @param seg the segment
     * @param at the header
     */
    public static int ipVersion(MemorySegment seg, long at) {
        return (seg.get(Be.BYTE, at + IP_VERSION_OFFSET) & 0xFF) >>> 4;
    }

    /**
     * {@return the source port}
     *
     * @param seg the segment
     * @param at the header
     */
    public static int port(MemorySegment seg, long at) {
        return seg.get(Be.SHORT, at + PORT_OFFSET) & 0xFFFF;
    }

    /**
     * {@return whether the header is one rdma_cm would accept: version 0, IP version 4 or 6}
     *
     * @param seg the segment
     * @param at the header's offset in {@code seg}
     */
    public static boolean isValid(MemorySegment seg, long at) {
        int v = ipVersion(seg, at);
        return version(seg, at) == CMA_VERSION && (v == 4 || v == 6);
    }

    /**
     * {@return the source address; null if the header is not valid}
     *
     * @param seg the segment
     * @param at the header
     */
    public static InetAddress srcAddress(MemorySegment seg, long at) {
        return address(seg, at, at + SRC_ADDR_OFFSET);
    }

    /**
     * {@return the destination address; null if the header is not valid}
     *
     * @param seg the segment
     * @param at the header
     */
    public static InetAddress dstAddress(MemorySegment seg, long at) {
        return address(seg, at, at + DST_ADDR_OFFSET);
    }

    private static InetAddress address(MemorySegment seg, long header, long at) {
        if (!isValid(seg, header)) {
            return null;
        }
        int len = ipVersion(seg, header) == 4 ? 4 : 16;
        byte[] b = new byte[len];
        MemorySegment.copy(seg, Be.BYTE, at + 16 - len, b, 0, len);
        try {
            InetAddress a = InetAddress.getByAddress(b);
            // an IPv4-mapped IPv6 address comes back as an Inet4Address; rdma_cm's IPv6 header keeps it IPv6
            return len == 16 && a instanceof Inet4Address ? Inet6Address.getByAddress(null, b, -1) : a;
        } catch (UnknownHostException e) {
            return null; // cannot happen for 4 or 16 bytes
        }
    }
}
