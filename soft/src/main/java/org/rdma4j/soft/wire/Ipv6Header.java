// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.BYTE;
import static org.rdma4j.soft.wire.BigEndian.INT;
import static org.rdma4j.soft.wire.BigEndian.LONG;
import static org.rdma4j.soft.wire.BigEndian.SHORT;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Flyweight over the fixed 40-byte IPv6 header; a RoCEv2 GID is the IPv6 address.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |Version| Traffic Class |              Flow Label               |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |        Payload Length         |  Next Header  |   Hop Limit   |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                                                               |
 *  |                     Source Address (16)                       |
 *  |                                                               |
 *  |                                                               |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                                                               |
 *  |                  Destination Address (16)                     |
 *  |                                                               |
 *  |                                                               |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>Addresses are exposed as two network-order longs (high = first 8 bytes) so the hot path
 * never allocates, and can be copied to or from a {@code byte[16]}.
 * The ICRC covers this header with traffic class, flow label and hop limit all ones.
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class Ipv6Header {
    /** Length of the header in bytes. */
    public static final int LENGTH = 40;
    /** Offset of the word holding version, traffic class and flow label. */
    public static final int VERSION_CLASS_FLOW_OFFSET = 0;
    /** Offset of the 16-bit payload length (bytes after this header). */
    public static final int PAYLOAD_LENGTH_OFFSET = 4;
    /** Offset of the next-header byte. */
    public static final int NEXT_HEADER_OFFSET = 6;
    /** Offset of the hop-limit byte. */
    public static final int HOP_LIMIT_OFFSET = 7;
    /** Offset of the 16-byte source address. */
    public static final int SOURCE_ADDRESS_OFFSET = 8;
    /** Offset of the 16-byte destination address. */
    public static final int DESTINATION_ADDRESS_OFFSET = 24;
    /** Length of an address in bytes. */
    public static final int ADDRESS_LENGTH = 16;

    /** IP version number. */
    public static final int VERSION = 6;
    /** Next-header number of UDP. */
    public static final int NEXT_HEADER_UDP = 17;

    private static final int VERSION_SHIFT = 28;
    private static final int CLASS_SHIFT = 20;
    private static final int FLOW_MASK = 0x000F_FFFF;

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public Ipv6Header() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset where the IPv6 header starts
     * @return this
     */
    public Ipv6Header wrap(MemorySegment segment, long offset) {
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
     * Writes the first 8 bytes for one UDP datagram: version 6, next header UDP.
     *
     * @param trafficClass  the traffic class
     * @param flowLabel     the 20-bit flow label
     * @param payloadLength bytes after this header
     * @param hopLimit      the hop limit
     * @return this
     */
    public Ipv6Header writeUdp(int trafficClass, int flowLabel, int payloadLength, int hopLimit) {
        segment.set(INT, offset, VERSION << VERSION_SHIFT | (trafficClass & 0xFF) << CLASS_SHIFT | flowLabel & FLOW_MASK);
        segment.set(INT, offset + PAYLOAD_LENGTH_OFFSET,
                (payloadLength & 0xFFFF) << 16 | NEXT_HEADER_UDP << 8 | hopLimit & 0xFF);
        return this;
    }

    /** {@return the IP version; 6 for a valid header} */
    public int version() {
        return word() >>> VERSION_SHIFT;
    }

    /**
     * Sets the IP version.
     *
     * @param version the IP version
     * @return this
     */
    public Ipv6Header version(int version) {
        word(word() & ~(0xF << VERSION_SHIFT) | (version & 0xF) << VERSION_SHIFT);
        return this;
    }

    /** {@return the traffic class (DSCP and ECN)} */
    public int trafficClass() {
        return word() >>> CLASS_SHIFT & 0xFF;
    }

    /**
     * Sets the traffic class.
     *
     * @param trafficClass the traffic class
     * @return this
     */
    public Ipv6Header trafficClass(int trafficClass) {
        word(word() & ~(0xFF << CLASS_SHIFT) | (trafficClass & 0xFF) << CLASS_SHIFT);
        return this;
    }

    /** {@return the 20-bit flow label} */
    public int flowLabel() {
        return word() & FLOW_MASK;
    }

    /**
     * Sets the flow label; bits above 20 are ignored.
     *
     * @param flowLabel the flow label; bits above 20 are ignored
     * @return this
     */
    public Ipv6Header flowLabel(int flowLabel) {
        word(word() & ~FLOW_MASK | flowLabel & FLOW_MASK);
        return this;
    }

    /** {@return bytes after this header} */
    public int payloadLength() {
        return segment.get(SHORT, offset + PAYLOAD_LENGTH_OFFSET) & 0xFFFF;
    }

    /**
     * Sets bytes after this header.
     *
     * @param payloadLength bytes after this header
     * @return this
     */
    public Ipv6Header payloadLength(int payloadLength) {
        segment.set(SHORT, offset + PAYLOAD_LENGTH_OFFSET, (short) payloadLength);
        return this;
    }

    /** {@return the next-header number ({@link #NEXT_HEADER_UDP} for RoCEv2)} */
    public int nextHeader() {
        return segment.get(BYTE, offset + NEXT_HEADER_OFFSET) & 0xFF;
    }

    /**
     * Sets the next-header number.
     *
     * @param nextHeader the next-header number
     * @return this
     */
    public Ipv6Header nextHeader(int nextHeader) {
        segment.set(BYTE, offset + NEXT_HEADER_OFFSET, (byte) nextHeader);
        return this;
    }

    /** {@return the hop limit} */
    public int hopLimit() {
        return segment.get(BYTE, offset + HOP_LIMIT_OFFSET) & 0xFF;
    }

    /**
     * Sets the hop limit.
     *
     * @param hopLimit the hop limit
     * @return this
     */
    public Ipv6Header hopLimit(int hopLimit) {
        segment.set(BYTE, offset + HOP_LIMIT_OFFSET, (byte) hopLimit);
        return this;
    }

    /** {@return the first 8 bytes of the source address as a network-order long} */
    public long sourceAddressHigh() {
        return segment.get(LONG, offset + SOURCE_ADDRESS_OFFSET);
    }

    /** {@return the last 8 bytes of the source address as a network-order long} */
    public long sourceAddressLow() {
        return segment.get(LONG, offset + SOURCE_ADDRESS_OFFSET + 8);
    }

    /**
     * Sets first 8 bytes.
     *
     * @param high first 8 bytes
     * @param low last 8 bytes
     * @return this
     */
    public Ipv6Header sourceAddress(long high, long low) {
        segment.set(LONG, offset + SOURCE_ADDRESS_OFFSET, high);
        segment.set(LONG, offset + SOURCE_ADDRESS_OFFSET + 8, low);
        return this;
    }

    /**
     * Sets holds the address.
     *
     * @param src holds the address
     * @param srcOffset where in {@code src}
     * @return this
     */
    public Ipv6Header sourceAddress(byte[] src, int srcOffset) {
        MemorySegment.copy(src, srcOffset, segment, ValueLayout.JAVA_BYTE, offset + SOURCE_ADDRESS_OFFSET, ADDRESS_LENGTH);
        return this;
    }

    /**
     * Sets receives the 16 address bytes.
     *
     * @param dst receives the 16 address bytes
     * @param dstOffset where in {@code dst}
     */
    public void copySourceAddress(byte[] dst, int dstOffset) {
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset + SOURCE_ADDRESS_OFFSET, dst, dstOffset, ADDRESS_LENGTH);
    }

    /** {@return the first 8 bytes of the destination address as a network-order long} */
    public long destinationAddressHigh() {
        return segment.get(LONG, offset + DESTINATION_ADDRESS_OFFSET);
    }

    /** {@return the last 8 bytes of the destination address as a network-order long} */
    public long destinationAddressLow() {
        return segment.get(LONG, offset + DESTINATION_ADDRESS_OFFSET + 8);
    }

    /**
     * Sets first 8 bytes.
     *
     * @param high first 8 bytes
     * @param low last 8 bytes
     * @return this
     */
    public Ipv6Header destinationAddress(long high, long low) {
        segment.set(LONG, offset + DESTINATION_ADDRESS_OFFSET, high);
        segment.set(LONG, offset + DESTINATION_ADDRESS_OFFSET + 8, low);
        return this;
    }

    /**
     * Sets holds the address.
     *
     * @param src holds the address
     * @param srcOffset where in {@code src}
     * @return this
     */
    public Ipv6Header destinationAddress(byte[] src, int srcOffset) {
        MemorySegment.copy(src, srcOffset, segment, ValueLayout.JAVA_BYTE, offset + DESTINATION_ADDRESS_OFFSET,
                ADDRESS_LENGTH);
        return this;
    }

    /**
     * Sets receives the 16 address bytes.
     *
     * @param dst receives the 16 address bytes
     * @param dstOffset where in {@code dst}
     */
    public void copyDestinationAddress(byte[] dst, int dstOffset) {
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset + DESTINATION_ADDRESS_OFFSET, dst, dstOffset,
                ADDRESS_LENGTH);
    }

    private int word() {
        return segment.get(INT, offset + VERSION_CLASS_FLOW_OFFSET);
    }

    private void word(int value) {
        segment.set(INT, offset + VERSION_CLASS_FLOW_OFFSET, value);
    }
}
