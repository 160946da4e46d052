// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.wire.BigEndian.INT;
import static org.rdma4j.soft.wire.BigEndian.LONG;
import static org.rdma4j.soft.wire.BigEndian.SHORT;

import java.lang.foreign.MemorySegment;

/**
 * The DDP segment header (RFC 5041 section 4) as it sits at the start of an MPA FPDU, and the 16-bit
 * control field it shares with RDMAP (RFC 5040 section 4.2). Every offset here counts from the first
 * byte of the FPDU, the 2-byte MPA ULPDU length, as siw's {@code struct iwarp_ctrl} and the header
 * structs that embed it do; the DDP segment itself starts at {@link #CONTROL_OFFSET}.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |    ULPDU length (MPA)         |T|L| Rsvd  |DV |RV |Rsv|Opcode |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  tagged (T=1), 16 bytes in all:
 *  |                     Data Sink STag                            |  4
 *  |                     Data Sink Tagged Offset (64 bits)         |  8
 *  |                                                               |
 *  untagged (T=0), 20 bytes in all:
 *  |     reserved for the ULP (RDMAP: Invalidate STag)             |  4
 *  |                     Queue Number (QN)                         |  8
 *  |                     Message Sequence Number (MSN)             | 12
 *  |                     Message Offset (MO)                       | 16
 * </pre>
 *
 * <p>T, L and DV belong to DDP; RV and the opcode to RDMAP (see {@link Rdmap}). Reserved bits are sent
 * as zero and not checked on receipt. Stateless; safe for any number of threads.
 */
public final class Ddp {
    /** The DDP version siw and RFC 5041 speak (siw {@code DDP_VERSION}). */
    public static final int VERSION = 1;
    /** The RDMAP version siw and RFC 5040 speak (siw {@code RDMAP_VERSION}). */
    public static final int RDMAP_VERSION = 1;

    /** Offset of the MPA ULPDU length: the bytes that follow it up to the pad, header included (RFC 5044 4.1). */
    public static final int ULPDU_LENGTH_OFFSET = 0;
    /** Size of the MPA ULPDU length field (siw {@code MPA_HDR_SIZE}). */
    public static final int ULPDU_LENGTH_SIZE = 2;
    /** Offset of the 16-bit DDP/RDMAP control field (siw {@code ddp_rdmap_ctrl}). */
    public static final int CONTROL_OFFSET = 2;

    /** Control field: the Tagged flag, RFC 5041 4.2 (siw {@code DDP_FLAG_TAGGED}). */
    public static final int FLAG_TAGGED = 0x8000;
    /** Control field: the Last flag, set on the last segment of a DDP message (siw {@code DDP_FLAG_LAST}). */
    public static final int FLAG_LAST = 0x4000;
    /** Control field: the DDP version bits (siw {@code DDP_MASK_VERSION}), shifted by {@link #DDP_VERSION_SHIFT}. */
    public static final int DDP_VERSION_MASK = 0x0300;
    /** Shift of the DDP version. */
    public static final int DDP_VERSION_SHIFT = 8;
    /** Control field: the RDMAP version bits (siw {@code RDMAP_MASK_VERSION}), shifted by {@link #RDMAP_VERSION_SHIFT}. */
    public static final int RDMAP_VERSION_MASK = 0x00C0;
    /** Shift of the RDMAP version. */
    public static final int RDMAP_VERSION_SHIFT = 6;
    /** Control field: the RDMAP opcode bits (siw {@code RDMAP_MASK_OPCODE}); values in {@link Rdmap}. */
    public static final int OPCODE_MASK = 0x000F;

    /** Tagged header: offset of the Data Sink STag (siw {@code ddp_stag}, {@code sink_stag}). */
    public static final int STAG_OFFSET = 4;
    /** Tagged header: offset of the 64-bit Data Sink Tagged Offset (siw {@code ddp_to}, {@code sink_to}). */
    public static final int TAGGED_OFFSET_OFFSET = 8;
    /** Length of a tagged FPDU header: ULPDU length, control, STag, TO (siw {@code struct iwarp_ctrl_tagged}). */
    public static final int TAGGED_HEADER_LENGTH = 16;

    /** Untagged header: the word RFC 5041 reserves for the ULP; RDMAP puts the Invalidate STag here. */
    public static final int ULP_WORD_OFFSET = 4;
    /** Untagged header: offset of the Queue Number (siw {@code ddp_qn}). */
    public static final int QUEUE_NUMBER_OFFSET = 8;
    /** Untagged header: offset of the Message Sequence Number (siw {@code ddp_msn}). */
    public static final int MSN_OFFSET = 12;
    /** Untagged header: offset of the Message Offset (siw {@code ddp_mo}). */
    public static final int MESSAGE_OFFSET_OFFSET = 16;
    /** Length of an untagged FPDU header (siw {@code struct iwarp_ctrl_untagged}). */
    public static final int UNTAGGED_HEADER_LENGTH = 20;

    /** Untagged queue 0: Send messages (siw {@code RDMAP_UNTAGGED_QN_SEND}). */
    public static final int QUEUE_SEND = 0;
    /** Untagged queue 1: RDMA Read Requests (siw {@code RDMAP_UNTAGGED_QN_RDMA_READ}). */
    public static final int QUEUE_READ_REQUEST = 1;
    /** Untagged queue 2: Terminate messages (siw {@code RDMAP_UNTAGGED_QN_TERMINATE}). */
    public static final int QUEUE_TERMINATE = 2;

    private Ddp() {
    }

    /**
     * {@return a control field with DDP and RDMAP version 1}
     *
     * @param tagged whether the segment is tagged
     * @param last   whether it is the last segment of its message
     * @param opcode the RDMAP opcode, 0 to 15
     */
    public static int control(boolean tagged, boolean last, int opcode) {
        return (tagged ? FLAG_TAGGED : 0) | (last ? FLAG_LAST : 0) | (VERSION << DDP_VERSION_SHIFT)
                | (RDMAP_VERSION << RDMAP_VERSION_SHIFT) | (opcode & OPCODE_MASK);
    }

    /**
     * {@return whether the control field has T set}
     *
     * @param control the control field
     */
    public static boolean tagged(int control) {
        return (control & FLAG_TAGGED) != 0;
    }

    /**
     * {@return whether the control field has L set}
     *
     * @param control the control field
     */
    public static boolean last(int control) {
        return (control & FLAG_LAST) != 0;
    }

    /**
     * {@return the DDP version of the control field}
     *
     * @param control the control field
     */
    public static int ddpVersion(int control) {
        return (control & DDP_VERSION_MASK) >>> DDP_VERSION_SHIFT;
    }

    /**
     * {@return the RDMAP version of the control field}
     *
     * @param control the control field
     */
    public static int rdmapVersion(int control) {
        return (control & RDMAP_VERSION_MASK) >>> RDMAP_VERSION_SHIFT;
    }

    /**
     * {@return the RDMAP opcode of the control field}
     *
     * @param control the control field
     */
    public static int opcode(int control) {
        return control & OPCODE_MASK;
    }

    /**
     * {@return the ULPDU length of the FPDU at {@code fpdu}, 0 to 65535}
     *
     * @param s    the segment
     * @param fpdu where the FPDU starts
     */
    public static int ulpduLength(MemorySegment s, long fpdu) {
        return Short.toUnsignedInt(s.get(SHORT, fpdu + ULPDU_LENGTH_OFFSET));
    }

    /**
     * Writes the ULPDU length.
     *
     * @param s      the segment
     * @param fpdu   where the FPDU starts
     * @param length the header and payload length after this field, pad and CRC excluded
     */
    public static void ulpduLength(MemorySegment s, long fpdu, int length) {
        s.set(SHORT, fpdu + ULPDU_LENGTH_OFFSET, (short) length);
    }

    /**
     * {@return the control field, 16 bits unsigned}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static int control(MemorySegment s, long fpdu) {
        return Short.toUnsignedInt(s.get(SHORT, fpdu + CONTROL_OFFSET));
    }

    /**
     * Writes the control field.
     *
     * @param s       the segment
     * @param fpdu    where the FPDU starts
     * @param control the control field, see {@link #control(boolean, boolean, int)}
     */
    public static void control(MemorySegment s, long fpdu, int control) {
        s.set(SHORT, fpdu + CONTROL_OFFSET, (short) control);
    }

    /**
     * {@return the Data Sink STag of a tagged FPDU}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static int stag(MemorySegment s, long fpdu) {
        return s.get(INT, fpdu + STAG_OFFSET);
    }

    /**
     * {@return the Data Sink Tagged Offset of a tagged FPDU}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static long taggedOffset(MemorySegment s, long fpdu) {
        return s.get(LONG, fpdu + TAGGED_OFFSET_OFFSET);
    }

    /**
     * Writes the tagged header fields after the control field.
     *
     * @param s            the segment
     * @param fpdu         where the FPDU starts
     * @param stag         the Data Sink STag
     * @param taggedOffset the Data Sink Tagged Offset of this segment's first payload byte
     */
    public static void taggedHeader(MemorySegment s, long fpdu, int stag, long taggedOffset) {
        s.set(INT, fpdu + STAG_OFFSET, stag);
        s.set(LONG, fpdu + TAGGED_OFFSET_OFFSET, taggedOffset);
    }

    /**
     * {@return the ULP word of an untagged FPDU}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static int ulpWord(MemorySegment s, long fpdu) {
        return s.get(INT, fpdu + ULP_WORD_OFFSET);
    }

    /**
     * {@return the Queue Number of an untagged FPDU}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static int queueNumber(MemorySegment s, long fpdu) {
        return s.get(INT, fpdu + QUEUE_NUMBER_OFFSET);
    }

    /**
     * {@return the Message Sequence Number of an untagged FPDU}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static int msn(MemorySegment s, long fpdu) {
        return s.get(INT, fpdu + MSN_OFFSET);
    }

    /**
     * {@return the Message Offset of an untagged FPDU}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static int messageOffset(MemorySegment s, long fpdu) {
        return s.get(INT, fpdu + MESSAGE_OFFSET_OFFSET);
    }

    /**
     * Writes the untagged header fields after the control field.
     *
     * @param s             the segment
     * @param fpdu          where the FPDU starts
     * @param ulpWord       the ULP word: the Invalidate STag for Send with Invalidate, else 0
     * @param queueNumber   the queue number, see {@link #QUEUE_SEND}
     * @param msn           the message sequence number (siw starts each queue at 1)
     * @param messageOffset the offset of this segment's first payload byte in its message
     */
    public static void untaggedHeader(MemorySegment s, long fpdu, int ulpWord, int queueNumber, int msn,
                                      int messageOffset) {
        s.set(INT, fpdu + ULP_WORD_OFFSET, ulpWord);
        s.set(INT, fpdu + QUEUE_NUMBER_OFFSET, queueNumber);
        s.set(INT, fpdu + MSN_OFFSET, msn);
        s.set(INT, fpdu + MESSAGE_OFFSET_OFFSET, messageOffset);
    }
}
