// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.BYTE;
import static org.rdma4j.soft.wire.BigEndian.INT;
import static org.rdma4j.soft.wire.BigEndian.LONG;
import static org.rdma4j.soft.wire.BigEndian.SHORT;
import static org.rdma4j.soft.wire.BigEndian.U24;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the 12-byte Base Transport Header that starts every RoCEv2 payload after UDP.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |    OpCode     |S|M|Pad|TVer   |             P_Key             |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |F|B|   Resv6   |                   Dest QPN                    |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |A|    Resv7    |                      PSN                      |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  S = solicited event, M = MigReq, Pad = pad count, F/B = FECN/BECN, A = AckReq
 * </pre>
 *
 * <p>Setters mask their argument to the field width and leave every other bit of the header
 * alone. Accessors do no checks beyond the segment's own bounds check.
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class Bth {
    /** Length of the header in bytes. */
    public static final int LENGTH = 12;
    /** Offset of the opcode byte. */
    public static final int OPCODE_OFFSET = 0;
    /** Offset of the byte holding SE, MigReq, PadCnt and TVer. */
    public static final int FLAGS_OFFSET = 1;
    /** Offset of the 16-bit partition key. */
    public static final int PKEY_OFFSET = 2;
    /** Offset of the byte holding FECN and BECN; the ICRC treats this byte as all ones. */
    public static final int ECN_OFFSET = 4;
    /** Offset of the 24-bit destination QP number. */
    public static final int DEST_QPN_OFFSET = 5;
    /** Offset of the byte holding AckReq. */
    public static final int ACK_REQ_OFFSET = 8;
    /** Offset of the 24-bit packet sequence number. */
    public static final int PSN_OFFSET = 9;

    /** The default partition key. */
    public static final int DEFAULT_PKEY = 0xFFFF;

    private static final int SE_BIT = 0x80;
    private static final int MIG_REQ_BIT = 0x40;
    private static final int PAD_MASK = 0x30;
    private static final int PAD_SHIFT = 4;
    private static final int TVER_MASK = 0x0F;
    private static final int FECN_BIT = 0x80;
    private static final int BECN_BIT = 0x40;
    private static final int ACK_REQ_BIT = 0x80;

    /**
     * {@return how many pad bytes (0..3) bring a payload to a multiple of 4}
     *
     * @param payloadLength payload bytes in the packet
     */
    public static int padCountFor(int payloadLength) {
        return -payloadLength & 3;
    }

    /**
     * {@return the opcode of the BTH at offset 0 of {@code frame}}: for the dispatch path, which
     * reads a field or two of many frames on many threads before it knows which QP (and which
     * flyweight instance) a frame is for. Stateless; safe for any thread.
     *
     * @param frame a frame starting with a BTH
     */
    public static int opcodeOf(MemorySegment frame) {
        return frame.get(BYTE, OPCODE_OFFSET) & 0xFF;
    }

    /**
     * {@return the 24-bit destination QP number of the BTH at offset 0 of {@code frame}}; as
     * {@link #opcodeOf}.
     *
     * @param frame a frame starting with a BTH
     */
    public static int destQpnOf(MemorySegment frame) {
        return frame.get(INT, ECN_OFFSET) & U24;
    }

    /**
     * {@return the 24-bit PSN of the BTH at offset 0 of {@code frame}}; as {@link #opcodeOf}.
     *
     * @param frame a frame starting with a BTH
     */
    public static int psnOf(MemorySegment frame) {
        return frame.get(INT, ACK_REQ_OFFSET) & U24;
    }

    /**
     * Writes a whole BTH at {@code offset} of {@code frame} without a flyweight (as {@link #write}).
     * Stateless; safe for any thread.
     *
     * @param frame          the frame
     * @param offset         where the BTH starts
     * @param opcode         the opcode, 0..255
     * @param solicitedEvent the solicited-event bit
     * @param padCount       pad bytes after the payload, 0..3
     * @param pkey           the partition key
     * @param destQpn        the 24-bit destination QP number
     * @param ackReq         the AckReq bit
     * @param psn            the 24-bit packet sequence number
     */
    public static void writeAt(MemorySegment frame, long offset, int opcode, boolean solicitedEvent, int padCount,
                               int pkey, int destQpn, boolean ackReq, int psn) {
        int flags = (solicitedEvent ? SE_BIT : 0) | ((padCount << PAD_SHIFT) & PAD_MASK);
        frame.set(INT, offset, (opcode & 0xFF) << 24 | flags << 16 | (pkey & 0xFFFF));
        frame.set(LONG, offset + ECN_OFFSET,
                (long) (destQpn & U24) << 32 | (ackReq ? (long) ACK_REQ_BIT << 24 : 0L) | (psn & U24));
    }

    /**
     * {@return the TVer of the BTH at offset 0 of {@code frame}}; as {@link #opcodeOf}.
     *
     * @param frame a frame
     */
    public static int tverOf(MemorySegment frame) {
        return frame.get(BYTE, FLAGS_OFFSET) & TVER_MASK;
    }

    /**
     * {@return the P_Key of the BTH at offset 0 of {@code frame}}; as {@link #opcodeOf}.
     *
     * @param frame a frame
     */
    public static int pkeyOf(MemorySegment frame) {
        return frame.get(SHORT, PKEY_OFFSET) & 0xFFFF;
    }

    /**
     * {@return the SE bit of the BTH at offset 0 of {@code frame}}; as {@link #opcodeOf}.
     *
     * @param frame a frame
     */
    public static boolean solicitedEventOf(MemorySegment frame) {
        return (frame.get(BYTE, FLAGS_OFFSET) & SE_BIT) != 0;
    }

    /**
     * {@return the AckReq bit of the BTH at offset 0 of {@code frame}}; as {@link #opcodeOf}.
     *
     * @param frame a frame
     */
    public static boolean ackReqOf(MemorySegment frame) {
        return (frame.get(BYTE, ACK_REQ_OFFSET) & ACK_REQ_BIT) != 0;
    }

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public Bth() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset  where the BTH starts in {@code segment}
     * @return this
     */
    public Bth wrap(MemorySegment segment, long offset) {
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
     * Writes the whole header in two stores; MigReq, TVer, FECN, BECN and reserved bits are zero.
     *
     * @param opcode         the opcode, 0..255
     * @param solicitedEvent the solicited-event bit
     * @param padCount       pad bytes after the payload, 0..3
     * @param pkey           the partition key
     * @param destQpn        the 24-bit destination QP number
     * @param ackReq         the AckReq bit
     * @param psn            the 24-bit packet sequence number
     * @return this
     */
    public Bth write(int opcode, boolean solicitedEvent, int padCount, int pkey, int destQpn,
                     boolean ackReq, int psn) {
        int flags = (solicitedEvent ? SE_BIT : 0) | ((padCount << PAD_SHIFT) & PAD_MASK);
        segment.set(INT, offset, (opcode & 0xFF) << 24 | flags << 16 | (pkey & 0xFFFF));
        segment.set(LONG, offset + ECN_OFFSET,
                (long) (destQpn & U24) << 32 | (ackReq ? (long) ACK_REQ_BIT << 24 : 0L) | (psn & U24));
        return this;
    }

    /**
     * Zeroes all 12 bytes.
     *
     * @return this
     */
    public Bth clear() {
        segment.set(INT, offset, 0);
        segment.set(LONG, offset + ECN_OFFSET, 0L);
        return this;
    }

    /** {@return the opcode, 0..255; see {@link Opcode}} */
    public int opcode() {
        return segment.get(BYTE, offset + OPCODE_OFFSET) & 0xFF;
    }

    /**
     * Sets the opcode, 0..255.
     *
     * @param opcode the opcode, 0..255
     * @return this
     */
    public Bth opcode(int opcode) {
        segment.set(BYTE, offset + OPCODE_OFFSET, (byte) opcode);
        return this;
    }

    /** {@return whether the solicited-event bit is set} */
    public boolean solicitedEvent() {
        return bit(FLAGS_OFFSET, SE_BIT);
    }

    /**
     * Sets the solicited-event bit.
     *
     * @param value the solicited-event bit
     * @return this
     */
    public Bth solicitedEvent(boolean value) {
        bit(FLAGS_OFFSET, SE_BIT, value);
        return this;
    }

    /** {@return whether the MigReq bit is set} */
    public boolean migReq() {
        return bit(FLAGS_OFFSET, MIG_REQ_BIT);
    }

    /**
     * Sets the MigReq bit.
     *
     * @param value the MigReq bit
     * @return this
     */
    public Bth migReq(boolean value) {
        bit(FLAGS_OFFSET, MIG_REQ_BIT, value);
        return this;
    }

    /** {@return how many pad bytes (0..3) follow the payload} */
    public int padCount() {
        return (segment.get(BYTE, offset + FLAGS_OFFSET) & PAD_MASK) >> PAD_SHIFT;
    }

    /**
     * Sets pad bytes after the payload, 0..3.
     *
     * @param padCount pad bytes after the payload, 0..3
     * @return this
     */
    public Bth padCount(int padCount) {
        field(FLAGS_OFFSET, PAD_MASK, padCount << PAD_SHIFT);
        return this;
    }

    /** {@return the transport header version; must be 0} */
    public int tver() {
        return segment.get(BYTE, offset + FLAGS_OFFSET) & TVER_MASK;
    }

    /**
     * Sets the transport header version, 0..15.
     *
     * @param tver the transport header version, 0..15
     * @return this
     */
    public Bth tver(int tver) {
        field(FLAGS_OFFSET, TVER_MASK, tver);
        return this;
    }

    /** {@return the partition key, 0..0xFFFF} */
    public int pkey() {
        return segment.get(SHORT, offset + PKEY_OFFSET) & 0xFFFF;
    }

    /**
     * Sets the partition key.
     *
     * @param pkey the partition key
     * @return this
     */
    public Bth pkey(int pkey) {
        segment.set(SHORT, offset + PKEY_OFFSET, (short) pkey);
        return this;
    }

    /** {@return whether the forward explicit congestion notification bit is set} */
    public boolean fecn() {
        return bit(ECN_OFFSET, FECN_BIT);
    }

    /**
     * Sets the FECN bit.
     *
     * @param value the FECN bit
     * @return this
     */
    public Bth fecn(boolean value) {
        bit(ECN_OFFSET, FECN_BIT, value);
        return this;
    }

    /** {@return whether the backward explicit congestion notification bit is set} */
    public boolean becn() {
        return bit(ECN_OFFSET, BECN_BIT);
    }

    /**
     * Sets the BECN bit.
     *
     * @param value the BECN bit
     * @return this
     */
    public Bth becn(boolean value) {
        bit(ECN_OFFSET, BECN_BIT, value);
        return this;
    }

    /** {@return the 24-bit destination QP number} */
    public int destQpn() {
        return segment.get(INT, offset + ECN_OFFSET) & U24;
    }

    /**
     * Sets the destination QP number; bits above 24 are ignored.
     *
     * @param qpn the destination QP number; bits above 24 are ignored
     * @return this
     */
    public Bth destQpn(int qpn) {
        long at = offset + ECN_OFFSET;
        segment.set(INT, at, segment.get(INT, at) & ~U24 | qpn & U24);
        return this;
    }

    /** {@return whether the requester asks for an acknowledgement} */
    public boolean ackReq() {
        return bit(ACK_REQ_OFFSET, ACK_REQ_BIT);
    }

    /**
     * Sets the AckReq bit.
     *
     * @param value the AckReq bit
     * @return this
     */
    public Bth ackReq(boolean value) {
        bit(ACK_REQ_OFFSET, ACK_REQ_BIT, value);
        return this;
    }

    /** {@return the 24-bit packet sequence number} */
    public int psn() {
        return segment.get(INT, offset + ACK_REQ_OFFSET) & U24;
    }

    /**
     * Sets the packet sequence number; bits above 24 are ignored.
     *
     * @param psn the packet sequence number; bits above 24 are ignored
     * @return this
     */
    public Bth psn(int psn) {
        long at = offset + ACK_REQ_OFFSET;
        segment.set(INT, at, segment.get(INT, at) & ~U24 | psn & U24);
        return this;
    }

    private boolean bit(int fieldOffset, int mask) {
        return (segment.get(BYTE, offset + fieldOffset) & mask) != 0;
    }

    private void bit(int fieldOffset, int mask, boolean on) {
        field(fieldOffset, mask, on ? mask : 0);
    }

    private void field(int fieldOffset, int mask, int value) {
        long at = offset + fieldOffset;
        segment.set(BYTE, at, (byte) (segment.get(BYTE, at) & ~mask | value & mask));
    }
}
