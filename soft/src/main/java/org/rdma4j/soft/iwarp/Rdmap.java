// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.wire.BigEndian.INT;
import static org.rdma4j.soft.wire.BigEndian.LONG;

import java.lang.foreign.MemorySegment;

/**
 * RDMAP (RFC 5040) as siw implements it: the opcodes, what each carries, and the RDMA Read Request
 * body. Offsets count from the start of the FPDU (see {@link Ddp}).
 *
 * <pre>
 *  RDMA Read Request: an untagged FPDU on queue 1 (offsets 0..19, see Ddp), then (RFC 5040 4.4):
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                   Data Sink STag                              | 20
 *  |                   Data Sink Tagged Offset (64 bits)           | 24
 *  |                                                               |
 *  |                   RDMA Read Message Size                      | 32
 *  |                   Data Source STag                            | 36
 *  |                   Data Source Tagged Offset (64 bits)         | 40
 *  |                                                               |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+  48
 * </pre>
 *
 * <p>Send with Invalidate and Send with Solicited Event and Invalidate carry the STag to invalidate in
 * the untagged header's ULP word ({@link #INVALIDATE_STAG_OFFSET}; siw {@code inval_stag}); the other
 * Sends send it as zero. Stateless; safe for any number of threads.
 */
public final class Rdmap {
    /** RDMA Write: tagged (siw {@code RDMAP_RDMA_WRITE}). */
    public static final int RDMA_WRITE = 0x0;
    /** RDMA Read Request: untagged, queue 1 (siw {@code RDMAP_RDMA_READ_REQ}). */
    public static final int RDMA_READ_REQUEST = 0x1;
    /** RDMA Read Response: tagged (siw {@code RDMAP_RDMA_READ_RESP}). */
    public static final int RDMA_READ_RESPONSE = 0x2;
    /** Send: untagged, queue 0 (siw {@code RDMAP_SEND}). */
    public static final int SEND = 0x3;
    /** Send with Invalidate (siw {@code RDMAP_SEND_INVAL}). */
    public static final int SEND_INVALIDATE = 0x4;
    /** Send with Solicited Event (siw {@code RDMAP_SEND_SE}). */
    public static final int SEND_SOLICITED = 0x5;
    /** Send with Solicited Event and Invalidate (siw {@code RDMAP_SEND_SE_INVAL}). */
    public static final int SEND_SOLICITED_INVALIDATE = 0x6;
    /** Terminate: untagged, queue 2 (siw {@code RDMAP_TERMINATE}); see {@link Terminate}. */
    public static final int TERMINATE = 0x7;
    /** The highest opcode siw knows; 0x8 to 0xF (RFC 7306 atomics, immediate data) are refused. */
    public static final int MAX_OPCODE = TERMINATE;

    /** Offset of the Invalidate STag of the two Send with Invalidate opcodes. */
    public static final int INVALIDATE_STAG_OFFSET = Ddp.ULP_WORD_OFFSET;

    /** Read Request: offset of the Data Sink STag (siw {@code rreq.sink_stag}). */
    public static final int READ_SINK_STAG_OFFSET = 20;
    /** Read Request: offset of the 64-bit Data Sink Tagged Offset (siw {@code rreq.sink_to}). */
    public static final int READ_SINK_OFFSET_OFFSET = 24;
    /** Read Request: offset of the RDMA Read Message Size (siw {@code rreq.read_size}). */
    public static final int READ_SIZE_OFFSET = 32;
    /** Read Request: offset of the Data Source STag (siw {@code rreq.source_stag}). */
    public static final int READ_SOURCE_STAG_OFFSET = 36;
    /** Read Request: offset of the 64-bit Data Source Tagged Offset (siw {@code rreq.source_to}). */
    public static final int READ_SOURCE_OFFSET_OFFSET = 40;
    /** Length of a Read Request FPDU header; it carries no payload (siw {@code struct iwarp_rdma_rreq}). */
    public static final int READ_REQUEST_HEADER_LENGTH = 48;

    private static final String[] NAMES = {"RDMA Write", "RDMA Read Request", "RDMA Read Response", "Send",
        "Send with Invalidate", "Send with Solicited Event", "Send with Solicited Event and Invalidate", "Terminate"};

    private Rdmap() {
    }

    /**
     * {@return whether siw implements this opcode}
     *
     * @param opcode the opcode, 0 to 15
     */
    public static boolean known(int opcode) {
        return opcode >= 0 && opcode <= MAX_OPCODE;
    }

    /**
     * {@return whether this opcode travels in tagged DDP segments (Write, Read Response)}
     *
     * @param opcode a known opcode
     */
    public static boolean tagged(int opcode) {
        return opcode == RDMA_WRITE || opcode == RDMA_READ_RESPONSE;
    }

    /**
     * {@return whether this opcode is one of the four Sends}
     *
     * @param opcode a known opcode
     */
    public static boolean send(int opcode) {
        return opcode >= SEND && opcode <= SEND_SOLICITED_INVALIDATE;
    }

    /**
     * {@return whether this Send asks for a solicited event}
     *
     * @param opcode a known opcode
     */
    public static boolean solicited(int opcode) {
        return opcode == SEND_SOLICITED || opcode == SEND_SOLICITED_INVALIDATE;
    }

    /**
     * {@return whether this Send carries an Invalidate STag}
     *
     * @param opcode a known opcode
     */
    public static boolean invalidates(int opcode) {
        return opcode == SEND_INVALIDATE || opcode == SEND_SOLICITED_INVALIDATE;
    }

    /**
     * {@return the untagged queue of this opcode, or -1 for the tagged ones}
     *
     * @param opcode a known opcode
     */
    public static int queueNumber(int opcode) {
        return switch (opcode) {
            case RDMA_READ_REQUEST -> Ddp.QUEUE_READ_REQUEST;
            case TERMINATE -> Ddp.QUEUE_TERMINATE;
            case SEND, SEND_INVALIDATE, SEND_SOLICITED, SEND_SOLICITED_INVALIDATE -> Ddp.QUEUE_SEND;
            default -> -1;
        };
    }

    /**
     * {@return the fixed FPDU header length of this opcode, ULPDU length field included, as siw's
     * {@code iwarp_pktinfo[].hdr_len}: 16 tagged, 20 Send, 48 Read Request, 24 Terminate (whose
     * optional copy of the failed header follows); -1 for an unknown opcode}
     *
     * @param opcode the opcode, 0 to 15
     */
    public static int headerLength(int opcode) {
        return switch (opcode) {
            case RDMA_WRITE, RDMA_READ_RESPONSE -> Ddp.TAGGED_HEADER_LENGTH;
            case SEND, SEND_INVALIDATE, SEND_SOLICITED, SEND_SOLICITED_INVALIDATE -> Ddp.UNTAGGED_HEADER_LENGTH;
            case RDMA_READ_REQUEST -> READ_REQUEST_HEADER_LENGTH;
            case TERMINATE -> Terminate.HEADER_LENGTH;
            default -> -1;
        };
    }

    /**
     * {@return the RFC 5040 name of the opcode, or "opcode N"}
     *
     * @param opcode the opcode
     */
    public static String name(int opcode) {
        return known(opcode) ? NAMES[opcode] : "opcode " + opcode;
    }

    /**
     * {@return the control field of a segment of this opcode: T as the opcode requires, versions 1}
     *
     * @param opcode a known opcode
     * @param last   whether the segment is the last of its message
     */
    public static int control(int opcode, boolean last) {
        return Ddp.control(tagged(opcode), last, opcode);
    }

    /**
     * {@return the Invalidate STag of a Send with Invalidate}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static int invalidateStag(MemorySegment s, long fpdu) {
        return s.get(INT, fpdu + INVALIDATE_STAG_OFFSET);
    }

    /**
     * {@return the Read Request's Data Sink STag}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static int readSinkStag(MemorySegment s, long fpdu) {
        return s.get(INT, fpdu + READ_SINK_STAG_OFFSET);
    }

    /**
     * {@return the Read Request's Data Sink Tagged Offset}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static long readSinkOffset(MemorySegment s, long fpdu) {
        return s.get(LONG, fpdu + READ_SINK_OFFSET_OFFSET);
    }

    /**
     * {@return the Read Request's message size, unsigned}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static int readSize(MemorySegment s, long fpdu) {
        return s.get(INT, fpdu + READ_SIZE_OFFSET);
    }

    /**
     * {@return the Read Request's Data Source STag}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static int readSourceStag(MemorySegment s, long fpdu) {
        return s.get(INT, fpdu + READ_SOURCE_STAG_OFFSET);
    }

    /**
     * {@return the Read Request's Data Source Tagged Offset}
     *
     * @param s the segment
     * @param fpdu where the FPDU starts
     */
    public static long readSourceOffset(MemorySegment s, long fpdu) {
        return s.get(LONG, fpdu + READ_SOURCE_OFFSET_OFFSET);
    }

    /**
     * Writes the Read Request body (offsets 20 to 47).
     *
     * @param s            the segment
     * @param fpdu         where the FPDU starts
     * @param sinkStag     the requester's STag the response is placed into
     * @param sinkOffset   the tagged offset in the sink
     * @param size         the number of bytes to read
     * @param sourceStag   the responder's STag to read from
     * @param sourceOffset the tagged offset in the source
     */
    public static void readRequestBody(MemorySegment s, long fpdu, int sinkStag, long sinkOffset, int size,
                                       int sourceStag, long sourceOffset) {
        s.set(INT, fpdu + READ_SINK_STAG_OFFSET, sinkStag);
        s.set(LONG, fpdu + READ_SINK_OFFSET_OFFSET, sinkOffset);
        s.set(INT, fpdu + READ_SIZE_OFFSET, size);
        s.set(INT, fpdu + READ_SOURCE_STAG_OFFSET, sourceStag);
        s.set(LONG, fpdu + READ_SOURCE_OFFSET_OFFSET, sourceOffset);
    }
}
