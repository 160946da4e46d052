// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.wire.BigEndian.BYTE;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Builds MPA FPDUs (RFC 5044 section 4.1): the 2-byte ULPDU length, the DDP/RDMAP header, the payload,
 * zero pad to a multiple of 4 and the 4-byte CRC field, which carries the CRC32c when CRC was negotiated
 * and zero otherwise (the field is always there: siw reads and writes it either way, {@code MPA_CRC_SIZE}).
 *
 * <pre>
 *  | ULPDU length | DDP/RDMAP header | payload ... | pad 0-3 | CRC (4) |
 *  |   2 bytes    | counted by the ULPDU length    |
 * </pre>
 *
 * <p>The payload may already sit in place after the header (the copy is then skipped), so a sender can
 * gather into its transmit buffer and call {@link #frame}. Allocation-free. Not thread safe; one
 * encoder per connection direction.
 */
public final class FpduEncoder {
    /** Size of the MPA CRC field (siw {@code MPA_CRC_SIZE}). */
    public static final int CRC_SIZE = 4;
    /** The largest ULPDU length the 16-bit field can say. */
    public static final int MAX_ULPDU_LENGTH = 0xFFFF;

    private final boolean crcEnabled;
    private final Crc32c crc = new Crc32c();

    /**
     * Creates an encoder.
     *
     * @param crcEnabled whether the connection negotiated CRC (either side set C in its MPA frame)
     */
    public FpduEncoder(boolean crcEnabled) {
        this.crcEnabled = crcEnabled;
    }

    /** {@return whether this encoder fills in the CRC} */
    public boolean crcEnabled() {
        return crcEnabled;
    }

    /**
     * {@return the bytes on the wire of an FPDU: header and payload, pad, CRC}
     *
     * @param headerLength  the FPDU header length, ULPDU length field included (see {@link Rdmap#headerLength})
     * @param payloadLength the payload length
     */
    public static int fpduLength(int headerLength, int payloadLength) {
        return (headerLength + payloadLength + 3 & ~3) + CRC_SIZE;
    }

    /**
     * {@return the most payload one FPDU of this header may carry so that it fills one TCP segment, as
     * siw sizes them ({@code siw_prepare_fpdu}): the MSS rounded down to a multiple of 8 ("loopback may
     * give odd numbers"), less header and CRC, and never more than the 16-bit ULPDU length allows; a
     * payload cut to this size needs no pad}
     *
     * @param mss          the TCP maximum segment size
     * @param headerLength the FPDU header length, ULPDU length field included
     * @throws IllegalArgumentException if the MSS leaves no room for payload
     */
    public static int maxPayload(int mss, int headerLength) {
        int segment = mss & ~7;
        int payload = Math.min(segment - headerLength - CRC_SIZE,
                MAX_ULPDU_LENGTH + Ddp.ULPDU_LENGTH_SIZE - headerLength & ~3);
        if (payload <= 0) {
            throw new IllegalArgumentException("an MSS of " + mss + " leaves no room for payload after a "
                    + headerLength + "-byte FPDU header and the CRC");
        }
        return payload;
    }

    /**
     * Completes an FPDU whose header (from its control field on) and payload are in place: writes the
     * ULPDU length, the zero pad and the CRC field.
     *
     * @param dst           the segment
     * @param fpdu          where the FPDU starts
     * @param headerLength  the header length, ULPDU length field included
     * @param payloadLength the payload length
     * @return the FPDU's length on the wire
     * @throws IllegalArgumentException  if the ULPDU would be over 65535 bytes
     * @throws IndexOutOfBoundsException if the FPDU does not fit in {@code dst}
     */
    public int frame(MemorySegment dst, long fpdu, int headerLength, int payloadLength) {
        int ulpdu = headerLength + payloadLength - Ddp.ULPDU_LENGTH_SIZE;
        if (headerLength < Ddp.TAGGED_HEADER_LENGTH || payloadLength < 0 || ulpdu > MAX_ULPDU_LENGTH) {
            throw new IllegalArgumentException("FPDU header " + headerLength + " and payload " + payloadLength
                    + " bytes: the ULPDU must be 14 to 65535 bytes");
        }
        int total = fpduLength(headerLength, payloadLength);
        Objects.checkFromIndexSize(fpdu, total, dst.byteSize());
        Ddp.ulpduLength(dst, fpdu, ulpdu);
        long crcAt = fpdu + total - CRC_SIZE;
        for (long p = fpdu + headerLength + payloadLength; p < crcAt; p++) {
            dst.set(BYTE, p, (byte) 0);
        }
        Crc32c.writeWire(dst, crcAt, crcEnabled ? crc.compute(dst, fpdu, total - CRC_SIZE) : 0);
        return total;
    }

    /**
     * Writes a tagged FPDU: RDMA Write or Read Response.
     *
     * @param dst          the segment
     * @param fpdu         where the FPDU starts
     * @param opcode       {@link Rdmap#RDMA_WRITE} or {@link Rdmap#RDMA_READ_RESPONSE}
     * @param last         whether this is the message's last segment
     * @param stag         the Data Sink STag
     * @param taggedOffset the tagged offset of the first payload byte
     * @param payload      the payload's segment
     * @param from         where the payload starts
     * @param length       the payload length
     * @return the FPDU's length on the wire
     */
    public int tagged(MemorySegment dst, long fpdu, int opcode, boolean last, int stag, long taggedOffset,
                      MemorySegment payload, long from, int length) {
        if (!Rdmap.known(opcode) || !Rdmap.tagged(opcode)) {
            throw new IllegalArgumentException(Rdmap.name(opcode) + " is not a tagged operation");
        }
        return withPayload(dst, fpdu, Ddp.TAGGED_HEADER_LENGTH, payload, from, length,
                Rdmap.control(opcode, last), stag, taggedOffset, 0, 0, 0);
    }

    /**
     * Writes an untagged Send FPDU on queue 0.
     *
     * @param dst            the segment
     * @param fpdu           where the FPDU starts
     * @param opcode         one of the four Sends
     * @param last           whether this is the message's last segment
     * @param invalidateStag the STag to invalidate for the two Send with Invalidate opcodes, else 0
     * @param msn            the message sequence number
     * @param messageOffset  the offset of the first payload byte in the message
     * @param payload        the payload's segment
     * @param from           where the payload starts
     * @param length         the payload length
     * @return the FPDU's length on the wire
     */
    public int send(MemorySegment dst, long fpdu, int opcode, boolean last, int invalidateStag, int msn,
                    int messageOffset, MemorySegment payload, long from, int length) {
        if (!Rdmap.send(opcode)) {
            throw new IllegalArgumentException(Rdmap.name(opcode) + " is not a Send");
        }
        return withPayload(dst, fpdu, Ddp.UNTAGGED_HEADER_LENGTH, payload, from, length,
                Rdmap.control(opcode, last), Rdmap.invalidates(opcode) ? invalidateStag : 0, 0, msn,
                messageOffset, 1);
    }

    /**
     * Writes an RDMA Read Request FPDU on queue 1 (one segment, no payload).
     *
     * @param dst          the segment
     * @param fpdu         where the FPDU starts
     * @param msn          the message sequence number of queue 1
     * @param sinkStag     the requester's STag for the response
     * @param sinkOffset   the tagged offset in the sink
     * @param size         the bytes to read
     * @param sourceStag   the responder's STag to read from
     * @param sourceOffset the tagged offset in the source
     * @return the FPDU's length on the wire
     */
    public int readRequest(MemorySegment dst, long fpdu, int msn, int sinkStag, long sinkOffset, int size,
                           int sourceStag, long sourceOffset) {
        Objects.checkFromIndexSize(fpdu, fpduLength(Rdmap.READ_REQUEST_HEADER_LENGTH, 0), dst.byteSize());
        Ddp.control(dst, fpdu, Rdmap.control(Rdmap.RDMA_READ_REQUEST, true));
        Ddp.untaggedHeader(dst, fpdu, 0, Ddp.QUEUE_READ_REQUEST, msn, 0);
        Rdmap.readRequestBody(dst, fpdu, sinkStag, sinkOffset, size, sourceStag, sourceOffset);
        return frame(dst, fpdu, Rdmap.READ_REQUEST_HEADER_LENGTH, 0);
    }

    /**
     * Writes a Terminate FPDU on queue 2 with an optional copy of the failed segment's header.
     *
     * @param dst         the segment
     * @param fpdu        where the FPDU starts
     * @param msn         the message sequence number of queue 2 (siw sends 1)
     * @param controlWord the Terminate Control word, see {@link Terminate#controlWord(int, int, int, int)}
     * @param copied      the copied DDP Segment Length and headers (see {@link Terminate}), or any segment
     * @param from        where the copy starts
     * @param length      its length, 0 for none
     * @return the FPDU's length on the wire
     */
    public int terminate(MemorySegment dst, long fpdu, int msn, int controlWord, MemorySegment copied, long from,
                         int length) {
        Objects.checkFromIndexSize(fpdu, fpduLength(Terminate.HEADER_LENGTH, length), dst.byteSize());
        Terminate.header(dst, fpdu, msn, controlWord);
        if (length > 0) {
            MemorySegment.copy(copied, from, dst, fpdu + Terminate.COPIED_HEADER_OFFSET, length);
        }
        return frame(dst, fpdu, Terminate.HEADER_LENGTH, length);
    }

    private int withPayload(MemorySegment dst, long fpdu, int headerLength, MemorySegment payload, long from,
                            int length, int control, int word4, long taggedOffset, int msn, int messageOffset,
                            int untagged) {
        Objects.checkFromIndexSize(fpdu, fpduLength(headerLength, length), dst.byteSize());
        Ddp.control(dst, fpdu, control);
        if (untagged != 0) {
            Ddp.untaggedHeader(dst, fpdu, word4, Ddp.QUEUE_SEND, msn, messageOffset);
        } else {
            Ddp.taggedHeader(dst, fpdu, word4, taggedOffset);
        }
        long at = fpdu + headerLength;
        if (length > 0 && (payload != dst || from != at)) {
            MemorySegment.copy(payload, from, dst, at, length);
        }
        return frame(dst, fpdu, headerLength, length);
    }
}
