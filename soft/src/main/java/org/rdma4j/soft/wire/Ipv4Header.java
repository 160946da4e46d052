// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.BYTE;
import static org.rdma4j.soft.wire.BigEndian.INT;
import static org.rdma4j.soft.wire.BigEndian.SHORT;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over an IPv4 header, for building RoCEv2 packets sent through a raw socket and for
 * parsing captures.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |Version|  IHL  |    DSCP   |ECN|         Total Length          |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |        Identification         |Flags|     Fragment Offset     |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  | Time to Live  |   Protocol    |        Header Checksum        |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                        Source Address                         |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                      Destination Address                      |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                 Options (IHL > 5, rare)                       |
 * </pre>
 *
 * <p>The ICRC covers this header with TOS, TTL and the checksum set to all ones but with Total
 * Length and Identification as sent, so a sender must fix the Identification (non-zero: the
 * kernel replaces 0) before computing the ICRC. See {@link Icrc}.
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class Ipv4Header {
    /** Length of a header without options. */
    public static final int LENGTH = 20;
    /** Offset of the version (high nibble) and IHL (low nibble) byte. */
    public static final int VERSION_IHL_OFFSET = 0;
    /** Offset of the type-of-service byte (DSCP and ECN); masked in the ICRC. */
    public static final int TOS_OFFSET = 1;
    /** Offset of the 16-bit total length. */
    public static final int TOTAL_LENGTH_OFFSET = 2;
    /** Offset of the 16-bit identification. */
    public static final int IDENTIFICATION_OFFSET = 4;
    /** Offset of the 16-bit flags and fragment offset. */
    public static final int FLAGS_FRAGMENT_OFFSET = 6;
    /** Offset of the time-to-live byte; masked in the ICRC. */
    public static final int TTL_OFFSET = 8;
    /** Offset of the protocol byte. */
    public static final int PROTOCOL_OFFSET = 9;
    /** Offset of the 16-bit header checksum; masked in the ICRC. */
    public static final int CHECKSUM_OFFSET = 10;
    /** Offset of the source address. */
    public static final int SOURCE_ADDRESS_OFFSET = 12;
    /** Offset of the destination address. */
    public static final int DESTINATION_ADDRESS_OFFSET = 16;

    /** IP version number. */
    public static final int VERSION = 4;
    /** Protocol number of UDP. */
    public static final int PROTOCOL_UDP = 17;

    private static final int DONT_FRAGMENT = 0x4000;
    private static final int MORE_FRAGMENTS = 0x2000;
    private static final int FRAGMENT_OFFSET_MASK = 0x1FFF;

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public Ipv4Header() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset where the IPv4 header starts
     * @return this
     */
    public Ipv4Header wrap(MemorySegment segment, long offset) {
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
     * Writes a 20-byte header without options for one UDP datagram and sets its checksum.
     *
     * @param tos            type of service (DSCP and ECN)
     * @param totalLength    bytes from this header to the end of the datagram
     * @param identification the identification; rxe-compatible senders use a fixed non-zero value
     * @param dontFragment   the DF flag
     * @param ttl            time to live
     * @param source         source address, network order as an int (10.0.0.1 = 0x0A000001)
     * @param destination    destination address, likewise
     * @return this
     */
    public Ipv4Header writeUdp(int tos, int totalLength, int identification, boolean dontFragment, int ttl,
                               int source, int destination) {
        segment.set(INT, offset, (VERSION << 4 | 5) << 24 | (tos & 0xFF) << 16 | totalLength & 0xFFFF);
        segment.set(INT, offset + IDENTIFICATION_OFFSET,
                (identification & 0xFFFF) << 16 | (dontFragment ? DONT_FRAGMENT : 0));
        segment.set(INT, offset + TTL_OFFSET, (ttl & 0xFF) << 24 | PROTOCOL_UDP << 16);
        segment.set(INT, offset + SOURCE_ADDRESS_OFFSET, source);
        segment.set(INT, offset + DESTINATION_ADDRESS_OFFSET, destination);
        return updateChecksum();
    }

    /** {@return the IP version; 4 for a valid header} */
    public int version() {
        return (segment.get(BYTE, offset + VERSION_IHL_OFFSET) & 0xF0) >> 4;
    }

    /**
     * Sets the IP version.
     *
     * @param version the IP version
     * @return this
     */
    public Ipv4Header version(int version) {
        long at = offset + VERSION_IHL_OFFSET;
        segment.set(BYTE, at, (byte) (segment.get(BYTE, at) & 0x0F | (version & 0x0F) << 4));
        return this;
    }

    /** {@return the header length in 32-bit words (5 without options)} */
    public int ihl() {
        return segment.get(BYTE, offset + VERSION_IHL_OFFSET) & 0x0F;
    }

    /**
     * Sets the header length in 32-bit words.
     *
     * @param ihl the header length in 32-bit words
     * @return this
     */
    public Ipv4Header ihl(int ihl) {
        long at = offset + VERSION_IHL_OFFSET;
        segment.set(BYTE, at, (byte) (segment.get(BYTE, at) & 0xF0 | ihl & 0x0F));
        return this;
    }

    /** {@return the header length in bytes, {@code 4 * ihl()}} */
    public int headerLength() {
        return ihl() * 4;
    }

    /** {@return the type-of-service byte (DSCP in bits 7:2, ECN in bits 1:0)} */
    public int tos() {
        return segment.get(BYTE, offset + TOS_OFFSET) & 0xFF;
    }

    /**
     * Sets the type-of-service byte.
     *
     * @param tos the type-of-service byte
     * @return this
     */
    public Ipv4Header tos(int tos) {
        segment.set(BYTE, offset + TOS_OFFSET, (byte) tos);
        return this;
    }

    /** {@return bytes from this header to the end of the datagram} */
    public int totalLength() {
        return segment.get(SHORT, offset + TOTAL_LENGTH_OFFSET) & 0xFFFF;
    }

    /**
     * Sets bytes from this header to the end of the datagram.
     *
     * @param totalLength bytes from this header to the end of the datagram
     * @return this
     */
    public Ipv4Header totalLength(int totalLength) {
        segment.set(SHORT, offset + TOTAL_LENGTH_OFFSET, (short) totalLength);
        return this;
    }

    /** {@return the identification} */
    public int identification() {
        return segment.get(SHORT, offset + IDENTIFICATION_OFFSET) & 0xFFFF;
    }

    /**
     * Sets the identification.
     *
     * @param identification the identification
     * @return this
     */
    public Ipv4Header identification(int identification) {
        segment.set(SHORT, offset + IDENTIFICATION_OFFSET, (short) identification);
        return this;
    }

    /** {@return whether the don't-fragment flag is set} */
    public boolean dontFragment() {
        return (flagsFragment() & DONT_FRAGMENT) != 0;
    }

    /**
     * Sets the don't-fragment flag.
     *
     * @param value the don't-fragment flag
     * @return this
     */
    public Ipv4Header dontFragment(boolean value) {
        flagsFragment(flagsFragment() & ~DONT_FRAGMENT | (value ? DONT_FRAGMENT : 0));
        return this;
    }

    /** {@return whether the more-fragments flag is set} */
    public boolean moreFragments() {
        return (flagsFragment() & MORE_FRAGMENTS) != 0;
    }

    /**
     * Sets the more-fragments flag.
     *
     * @param value the more-fragments flag
     * @return this
     */
    public Ipv4Header moreFragments(boolean value) {
        flagsFragment(flagsFragment() & ~MORE_FRAGMENTS | (value ? MORE_FRAGMENTS : 0));
        return this;
    }

    /** {@return the fragment offset in 8-byte units} */
    public int fragmentOffset() {
        return flagsFragment() & FRAGMENT_OFFSET_MASK;
    }

    /**
     * Sets the fragment offset in 8-byte units.
     *
     * @param fragmentOffset the fragment offset in 8-byte units
     * @return this
     */
    public Ipv4Header fragmentOffset(int fragmentOffset) {
        flagsFragment(flagsFragment() & ~FRAGMENT_OFFSET_MASK | fragmentOffset & FRAGMENT_OFFSET_MASK);
        return this;
    }

    /** {@return the time to live} */
    public int ttl() {
        return segment.get(BYTE, offset + TTL_OFFSET) & 0xFF;
    }

    /**
     * Sets the time to live.
     *
     * @param ttl the time to live
     * @return this
     */
    public Ipv4Header ttl(int ttl) {
        segment.set(BYTE, offset + TTL_OFFSET, (byte) ttl);
        return this;
    }

    /** {@return the protocol number ({@link #PROTOCOL_UDP} for RoCEv2)} */
    public int protocol() {
        return segment.get(BYTE, offset + PROTOCOL_OFFSET) & 0xFF;
    }

    /**
     * Sets the protocol number.
     *
     * @param protocol the protocol number
     * @return this
     */
    public Ipv4Header protocol(int protocol) {
        segment.set(BYTE, offset + PROTOCOL_OFFSET, (byte) protocol);
        return this;
    }

    /** {@return the header checksum as stored} */
    public int headerChecksum() {
        return segment.get(SHORT, offset + CHECKSUM_OFFSET) & 0xFFFF;
    }

    /**
     * Sets the header checksum.
     *
     * @param checksum the header checksum
     * @return this
     */
    public Ipv4Header headerChecksum(int checksum) {
        segment.set(SHORT, offset + CHECKSUM_OFFSET, (short) checksum);
        return this;
    }

    /** {@return the source address as a network-order int} */
    public int sourceAddress() {
        return segment.get(INT, offset + SOURCE_ADDRESS_OFFSET);
    }

    /**
     * Sets the source address as a network-order int.
     *
     * @param address the source address as a network-order int
     * @return this
     */
    public Ipv4Header sourceAddress(int address) {
        segment.set(INT, offset + SOURCE_ADDRESS_OFFSET, address);
        return this;
    }

    /** {@return the destination address as a network-order int} */
    public int destinationAddress() {
        return segment.get(INT, offset + DESTINATION_ADDRESS_OFFSET);
    }

    /**
     * Sets the destination address as a network-order int.
     *
     * @param address the destination address as a network-order int
     * @return this
     */
    public Ipv4Header destinationAddress(int address) {
        segment.set(INT, offset + DESTINATION_ADDRESS_OFFSET, address);
        return this;
    }

    /**
     * Computes the header checksum: the ones' complement of the ones' complement sum of the
     * header's 16-bit words, taking the checksum field as zero.
     *
     * @return the checksum the header should carry
     */
    public int computeChecksum() {
        return ~fold(sumWords() - headerChecksum()) & 0xFFFF;
    }

    /**
     * Stores {@link #computeChecksum()}.
     *
     * @return this
     */
    public Ipv4Header updateChecksum() {
        return headerChecksum(computeChecksum());
    }

    /** {@return whether the stored checksum matches the header} */
    public boolean isChecksumValid() {
        return fold(sumWords()) == 0xFFFF;
    }

    private int sumWords() {
        int length = headerLength();
        int sum = 0;
        for (int i = 0; i < length; i += 2) {
            sum += segment.get(SHORT, offset + i) & 0xFFFF;
        }
        return sum;
    }

    private int flagsFragment() {
        return segment.get(SHORT, offset + FLAGS_FRAGMENT_OFFSET) & 0xFFFF;
    }

    private void flagsFragment(int value) {
        segment.set(SHORT, offset + FLAGS_FRAGMENT_OFFSET, (short) value);
    }

    private static int fold(int sum) {
        sum = (sum & 0xFFFF) + (sum >>> 16);
        return (sum & 0xFFFF) + (sum >>> 16);
    }
}
