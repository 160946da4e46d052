// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.INT;
import static org.rdma4j.soft.wire.BigEndian.SHORT;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the 8-byte UDP header in front of every RoCEv2 BTH.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |          Source Port          |       Destination Port        |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |            Length             |           Checksum            |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>rxe sends checksum 0 (over IPv6 too) and relies on the ICRC, which covers this header with
 * the checksum set to all ones. The source port only spreads flows (rxe: 0xC000 + a hash of the QPN).
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class UdpHeader {
    /** Length of the header in bytes. */
    public static final int LENGTH = 8;
    /** Offset of the 16-bit source port. */
    public static final int SOURCE_PORT_OFFSET = 0;
    /** Offset of the 16-bit destination port. */
    public static final int DESTINATION_PORT_OFFSET = 2;
    /** Offset of the 16-bit length (this header plus payload). */
    public static final int LENGTH_OFFSET = 4;
    /** Offset of the 16-bit checksum; masked in the ICRC. */
    public static final int CHECKSUM_OFFSET = 6;

    /** The IANA UDP port of RoCEv2. */
    public static final int ROCE_V2_PORT = 4791;

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public UdpHeader() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset where the UDP header starts
     * @return this
     */
    public UdpHeader wrap(MemorySegment segment, long offset) {
        this.segment = segment;
        this.offset = offset;
        return this;
    }

    /** {@return the wrapped segment} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return where the header starts in {@link #segment()}} */
    public long offset() {
        return offset;
    }

    /**
     * Writes the whole header in two stores.
     *
     * @param sourcePort      the source port
     * @param destinationPort the destination port, normally {@link #ROCE_V2_PORT}
     * @param length          this header plus payload, in bytes
     * @param checksum        the checksum; 0 for none
     * @return this
     */
    public UdpHeader write(int sourcePort, int destinationPort, int length, int checksum) {
        segment.set(INT, offset, (sourcePort & 0xFFFF) << 16 | destinationPort & 0xFFFF);
        segment.set(INT, offset + LENGTH_OFFSET, (length & 0xFFFF) << 16 | checksum & 0xFFFF);
        return this;
    }

    /** {@return the source port} */
    public int sourcePort() {
        return segment.get(SHORT, offset + SOURCE_PORT_OFFSET) & 0xFFFF;
    }

    /**
     * Sets the source port.
     *
     * @param port the source port
     * @return this
     */
    public UdpHeader sourcePort(int port) {
        segment.set(SHORT, offset + SOURCE_PORT_OFFSET, (short) port);
        return this;
    }

    /** {@return the destination port} */
    public int destinationPort() {
        return segment.get(SHORT, offset + DESTINATION_PORT_OFFSET) & 0xFFFF;
    }

    /**
     * Sets the destination port.
     *
     * @param port the destination port
     * @return this
     */
    public UdpHeader destinationPort(int port) {
        segment.set(SHORT, offset + DESTINATION_PORT_OFFSET, (short) port);
        return this;
    }

    /** {@return this header plus payload, in bytes} */
    public int length() {
        return segment.get(SHORT, offset + LENGTH_OFFSET) & 0xFFFF;
    }

    /**
     * Sets this header plus payload, in bytes.
     *
     * @param length this header plus payload, in bytes
     * @return this
     */
    public UdpHeader length(int length) {
        segment.set(SHORT, offset + LENGTH_OFFSET, (short) length);
        return this;
    }

    /** {@return the checksum as stored; 0 means none} */
    public int checksum() {
        return segment.get(SHORT, offset + CHECKSUM_OFFSET) & 0xFFFF;
    }

    /**
     * Sets the checksum.
     *
     * @param checksum the checksum
     * @return this
     */
    public UdpHeader checksum(int checksum) {
        segment.set(SHORT, offset + CHECKSUM_OFFSET, (short) checksum);
        return this;
    }
}
