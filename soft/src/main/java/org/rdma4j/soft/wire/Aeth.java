// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.BYTE;
import static org.rdma4j.soft.wire.BigEndian.INT;
import static org.rdma4j.soft.wire.BigEndian.U24;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the 4-byte ACK Extended Transport Header carried by ACKNOWLEDGE, ATOMIC
 * ACKNOWLEDGE and RDMA READ RESPONSE FIRST/LAST/ONLY, plus static helpers that decode the syndrome.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |0|Typ| Value   |                      MSN                      |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  Typ (syndrome bits 6:5): 00 ACK (value = credits), 01 RNR NAK (value = RNR timer code),
 *  11 NAK (value = NAK code); 10 is reserved.
 * </pre>
 *
 * <p>Not thread safe; one instance per thread (the static helpers are safe for any thread).
 */
public final class Aeth {
    /** Length of the header in bytes. */
    public static final int LENGTH = 4;
    /** Offset of the syndrome byte. */
    public static final int SYNDROME_OFFSET = 0;
    /** Offset of the 24-bit message sequence number. */
    public static final int MSN_OFFSET = 1;

    /** Syndrome type bits. */
    public static final int TYPE_MASK = 0x60;
    /** Syndrome value bits: credits, RNR timer code or NAK code. */
    public static final int VALUE_MASK = 0x1F;
    /** Syndrome type of a positive acknowledgement. */
    public static final int TYPE_ACK = 0x00;
    /** Syndrome type of a receiver-not-ready NAK; OR it with an RNR timer code. */
    public static final int RNR_NAK = 0x20;
    /** Syndrome type of a NAK. */
    public static final int TYPE_NAK = 0x60;

    /** ACK syndrome saying "end-to-end credits not used" (what rxe sends). */
    public static final int ACK_CREDITS_INVALID = 0x1F;
    /** NAK: PSN sequence error; the requester resends from the MSN's successor. */
    public static final int NAK_PSN_SEQ_ERR = 0x60;
    /** NAK: invalid request. */
    public static final int NAK_INVALID_REQUEST = 0x61;
    /** NAK: remote access error. */
    public static final int NAK_REMOTE_ACCESS = 0x62;
    /** NAK: remote operational error. */
    public static final int NAK_REMOTE_OP = 0x63;

    /**
     * Writes an AETH at {@code offset}.
     *
     * @param frame the frame
     * @param offset the AETH
     * @param syndrome the syndrome
     * @param msn the MSN
     */
    public static void writeAt(MemorySegment frame, long offset, int syndrome, int msn) {
        frame.set(INT, offset, (syndrome & 0xFF) << 24 | msn & U24);
    }

    /**
     * {@return the syndrome of the AETH at {@code offset}}
     *
     * @param frame the frame
     * @param offset the AETH
     */
    public static int syndromeAt(MemorySegment frame, long offset) {
        return frame.get(BYTE, offset + SYNDROME_OFFSET) & 0xFF;
    }

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public Aeth() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset where the AETH starts
     * @return this
     */
    public Aeth wrap(MemorySegment segment, long offset) {
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
     * Writes syndrome and MSN in one store.
     *
     * @param syndrome the syndrome byte
     * @param msn the 24-bit MSN
     * @return this
     */
    public Aeth write(int syndrome, int msn) {
        segment.set(INT, offset, (syndrome & 0xFF) << 24 | msn & U24);
        return this;
    }

    /** {@return the syndrome, 0..255} */
    public int syndrome() {
        return segment.get(BYTE, offset + SYNDROME_OFFSET) & 0xFF;
    }

    /**
     * Sets the syndrome byte.
     *
     * @param syndrome the syndrome byte
     * @return this
     */
    public Aeth syndrome(int syndrome) {
        segment.set(BYTE, offset + SYNDROME_OFFSET, (byte) syndrome);
        return this;
    }

    /** {@return the 24-bit message sequence number} */
    public int msn() {
        return segment.get(INT, offset) & U24;
    }

    /**
     * Sets the message sequence number; bits above 24 are ignored.
     *
     * @param msn the message sequence number; bits above 24 are ignored
     * @return this
     */
    public Aeth msn(int msn) {
        segment.set(INT, offset, segment.get(INT, offset) & ~U24 | msn & U24);
        return this;
    }

    /**
     * {@return whether it is a positive acknowledgement}
     *
     * @param syndrome a syndrome byte
     */
    public static boolean isAck(int syndrome) {
        return (syndrome & TYPE_MASK) == TYPE_ACK;
    }

    /**
     * {@return whether it is a receiver-not-ready NAK}
     *
     * @param syndrome a syndrome byte
     */
    public static boolean isRnrNak(int syndrome) {
        return (syndrome & TYPE_MASK) == RNR_NAK;
    }

    /**
     * {@return whether it is a NAK (not an RNR NAK)}
     *
     * @param syndrome a syndrome byte
     */
    public static boolean isNak(int syndrome) {
        return (syndrome & TYPE_MASK) == TYPE_NAK;
    }

    /**
     * {@return its RNR timer code, 0..31; see {@link RnrTimer}}
     *
     * @param syndrome an RNR NAK syndrome
     */
    public static int rnrTimerCode(int syndrome) {
        return syndrome & VALUE_MASK;
    }

    /**
     * {@return its NAK code, 0..31 (0 = PSN sequence error)}
     *
     * @param syndrome a NAK syndrome
     */
    public static int nakCode(int syndrome) {
        return syndrome & VALUE_MASK;
    }

    /**
     * {@return its credit count field, 0..31}
     *
     * @param syndrome an ACK syndrome
     */
    public static int credits(int syndrome) {
        return syndrome & VALUE_MASK;
    }

    /**
     * {@return the RNR NAK syndrome carrying it}
     *
     * @param timerCode an RNR timer code, 0..31
     */
    public static int rnrNak(int timerCode) {
        return RNR_NAK | timerCode & VALUE_MASK;
    }
}
