// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;

/**
 * A view of one complete, checked FPDU as {@link FpduReassembler} hands it over: where it is and what
 * its DDP/RDMAP header says. The view and the bytes under it are valid only during the callback (they
 * may sit in the reassembler's staging buffer, reused for the next FPDU); copy what must outlive it.
 * Header accessors read the segment at {@link #offset()} with the {@link Ddp} and {@link Rdmap} layouts.
 * Not thread safe.
 */
public final class Fpdu {
    private MemorySegment segment;
    private long offset;
    private int ulpduLength;
    private int control;

    Fpdu() {
    }

    Fpdu wrap(MemorySegment segment, long offset, int ulpduLength, int control) {
        this.segment = segment;
        this.offset = offset;
        this.ulpduLength = ulpduLength;
        this.control = control;
        return this;
    }

    /** {@return the segment holding the FPDU} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return where the FPDU (its ULPDU length field) starts in {@link #segment()}} */
    public long offset() {
        return offset;
    }

    /** {@return the ULPDU length: header and payload after the length field} */
    public int ulpduLength() {
        return ulpduLength;
    }

    /** {@return the FPDU's bytes on the wire: length field, ULPDU, pad and CRC} */
    public int fpduLength() {
        return FpduEncoder.fpduLength(ulpduLength + Ddp.ULPDU_LENGTH_SIZE, 0);
    }

    /** {@return the 16-bit DDP/RDMAP control field} */
    public int control() {
        return control;
    }

    /** {@return the RDMAP opcode} */
    public int opcode() {
        return Ddp.opcode(control);
    }

    /** {@return whether the segment is tagged} */
    public boolean tagged() {
        return Ddp.tagged(control);
    }

    /** {@return whether it is the last segment of its message} */
    public boolean last() {
        return Ddp.last(control);
    }

    /** {@return the header length of the opcode, length field included} */
    public int headerLength() {
        return Rdmap.headerLength(opcode());
    }

    /** {@return where the payload starts in {@link #segment()}} */
    public long payloadOffset() {
        return offset + headerLength();
    }

    /** {@return the payload length (for a Terminate: the copied header, if any)} */
    public int payloadLength() {
        return ulpduLength + Ddp.ULPDU_LENGTH_SIZE - headerLength();
    }

    /** {@return a tagged segment's Data Sink STag} */
    public int stag() {
        return Ddp.stag(segment, offset);
    }

    /** {@return a tagged segment's Data Sink Tagged Offset} */
    public long taggedOffset() {
        return Ddp.taggedOffset(segment, offset);
    }

    /** {@return an untagged segment's ULP word: the Invalidate STag of a Send with Invalidate} */
    public int invalidateStag() {
        return Ddp.ulpWord(segment, offset);
    }

    /** {@return an untagged segment's queue number} */
    public int queueNumber() {
        return Ddp.queueNumber(segment, offset);
    }

    /** {@return an untagged segment's message sequence number} */
    public int msn() {
        return Ddp.msn(segment, offset);
    }

    /** {@return an untagged segment's message offset} */
    public int messageOffset() {
        return Ddp.messageOffset(segment, offset);
    }
}
