// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.wire.BigEndian.SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Finds FPDUs in a TCP byte stream that arrives in chunks of any size, checks their framing and CRC,
 * and hands each complete FPDU to a {@link Handler}.
 *
 * <p>An FPDU that lies whole inside a chunk is handed over where it is; one that straddles chunks is
 * gathered in a staging buffer of the largest FPDU size, allocated once, so nothing is allocated per
 * FPDU or per chunk. Only the given ranges and the staging buffer are ever read or written.
 *
 * <p>Checks, in siw's order ({@code siw_get_hdr}, {@code siw_get_trailer}), each as soon as its bytes
 * are there: the ULPDU length against the negotiated maximum; DDP version 1, RDMAP version 1, a known
 * opcode whose tagged-ness matches T; the ULPDU length against the opcode's header; and, once the FPDU
 * is whole, the CRC when negotiated (without CRC the field is ignored). Pad bytes are covered by the
 * CRC and otherwise ignored, as RFC 5044 lets receivers do. Per-message rules (MSN, MO, STags, queues)
 * are the device's. The first error ends the stream: {@link #receive} returns it from then on and the
 * first bytes of the offending FPDU stay in {@link #failedHeader()} for the Terminate's copy.
 *
 * <p>Not thread safe; one reassembler per connection, driven by its receiving thread.
 */
public final class FpduReassembler {
    /** Receives each complete FPDU. */
    @FunctionalInterface
    public interface Handler {
        /**
         * Called once per FPDU, in stream order.
         *
         * @param fpdu the FPDU, valid only during the call
         */
        void onFpdu(Fpdu fpdu);
    }

    /** How many bytes of a failed FPDU are kept: a Read Request header, the longest. */
    public static final int FAILED_HEADER_CAPACITY = Rdmap.READ_REQUEST_HEADER_LENGTH;
    /** Bytes needed to check an FPDU's framing: the ULPDU length and the control field. */
    private static final int PREFIX = Ddp.ULPDU_LENGTH_SIZE + 2;

    private final int maxUlpduLength;
    private final boolean crcEnabled;
    private final Handler handler;
    private final MemorySegment staging;
    private final MemorySegment failedHeader;
    private final Crc32c crc = new Crc32c();
    private final Fpdu fpdu = new Fpdu();
    private int staged;
    private int expected;
    private int failedHeaderLength;
    private FpduError error = FpduError.NONE;
    private long fpdus;

    /**
     * Creates a reassembler.
     *
     * @param maxUlpduLength the largest ULPDU length accepted, 14 to 65535 (the peer's segments are cut
     *                       to its MSS; 65535 accepts anything the length field can say)
     * @param crcEnabled     whether CRC was negotiated
     * @param handler        receives each FPDU
     */
    public FpduReassembler(int maxUlpduLength, boolean crcEnabled, Handler handler) {
        int min = Ddp.TAGGED_HEADER_LENGTH - Ddp.ULPDU_LENGTH_SIZE;
        if (maxUlpduLength < min || maxUlpduLength > FpduEncoder.MAX_ULPDU_LENGTH) {
            throw new IllegalArgumentException("maximum ULPDU length " + maxUlpduLength + ": must be " + min
                    + " to " + FpduEncoder.MAX_ULPDU_LENGTH);
        }
        this.maxUlpduLength = maxUlpduLength;
        this.crcEnabled = crcEnabled;
        this.handler = Objects.requireNonNull(handler, "handler");
        Arena arena = Arena.ofAuto();
        this.staging = arena.allocate(FpduEncoder.fpduLength(maxUlpduLength + Ddp.ULPDU_LENGTH_SIZE, 0));
        this.failedHeader = arena.allocate(FAILED_HEADER_CAPACITY);
    }

    /**
     * Takes the next bytes of the stream and hands over every FPDU they complete.
     *
     * @param chunk  the segment holding the bytes
     * @param offset the first byte
     * @param length the number of bytes, 0 or more
     * @return {@link FpduError#NONE}, or the error that ended the stream (this call's or an earlier one)
     * @throws IndexOutOfBoundsException if the range is not inside {@code chunk}
     */
    public FpduError receive(MemorySegment chunk, long offset, long length) {
        Objects.checkFromIndexSize(offset, length, chunk.byteSize());
        long at = offset;
        long end = offset + length;
        while (error == FpduError.NONE && at < end) {
            if (staged == 0 && end - at >= PREFIX) {
                int total = check(chunk, at, end - at);
                if (total < 0) {
                    break;
                }
                if (end - at >= total) {
                    deliver(chunk, at, total);
                    at += total;
                    continue;
                }
                expected = total; // checked already; gather the rest
            }
            int want = (expected == 0 ? PREFIX : expected) - staged;
            int n = (int) Math.min(want, end - at);
            MemorySegment.copy(chunk, at, staging, staged, n);
            staged += n;
            at += n;
            if (expected == 0 && staged >= PREFIX) {
                int total = check(staging, 0, staged);
                if (total < 0) {
                    break;
                }
                expected = total;
            }
            if (expected != 0 && staged == expected) {
                int total = expected;
                staged = 0;
                expected = 0;
                deliver(staging, 0, total);
            }
        }
        return error;
    }

    /**
     * Checks the prefix of the FPDU at {@code at}; returns its length on the wire, or -1 after recording
     * an error.
     */
    private int check(MemorySegment s, long at, long available) {
        int ulpdu = Short.toUnsignedInt(s.get(SHORT, at));
        int control = Ddp.control(s, at);
        int opcode = Ddp.opcode(control);
        FpduError e = FpduError.NONE;
        if (ulpdu > maxUlpduLength) {
            e = FpduError.ULPDU_TOO_LONG;
        } else if (Ddp.ddpVersion(control) != Ddp.VERSION) {
            e = Ddp.tagged(control) ? FpduError.DDP_VERSION_TAGGED : FpduError.DDP_VERSION_UNTAGGED;
        } else if (Ddp.rdmapVersion(control) != Ddp.RDMAP_VERSION) {
            e = FpduError.RDMAP_VERSION;
        } else if (!Rdmap.known(opcode)) {
            e = FpduError.UNKNOWN_OPCODE;
        } else if (Rdmap.tagged(opcode) != Ddp.tagged(control)) {
            e = FpduError.TAGGED_FLAG_MISMATCH;
        } else if (ulpdu + Ddp.ULPDU_LENGTH_SIZE < Rdmap.headerLength(opcode)) {
            e = FpduError.ULPDU_TOO_SHORT;
        }
        int total = FpduEncoder.fpduLength(ulpdu + Ddp.ULPDU_LENGTH_SIZE, 0);
        if (e != FpduError.NONE) {
            fail(e, s, at, Math.min(available, total));
            return -1;
        }
        return total;
    }

    private void deliver(MemorySegment s, long at, int total) {
        if (crcEnabled) {
            int received = Crc32c.readWire(s, at + total - FpduEncoder.CRC_SIZE);
            if (crc.compute(s, at, total - FpduEncoder.CRC_SIZE) != received) {
                fail(FpduError.CRC_MISMATCH, s, at, total);
                return;
            }
        }
        fpdus++;
        handler.onFpdu(fpdu.wrap(s, at, Ddp.ulpduLength(s, at), Ddp.control(s, at)));
    }

    private void fail(FpduError e, MemorySegment s, long at, long available) {
        error = e;
        failedHeaderLength = (int) Math.min(available, FAILED_HEADER_CAPACITY);
        MemorySegment.copy(s, at, failedHeader, 0, failedHeaderLength);
    }

    /** {@return the error that ended the stream, or {@link FpduError#NONE}} */
    public FpduError error() {
        return error;
    }

    /** {@return whether part of an FPDU is waiting for more bytes: a close now cuts a message} */
    public boolean midFpdu() {
        return staged > 0;
    }

    /** {@return how many bytes of an incomplete FPDU are held} */
    public int stagedBytes() {
        return staged;
    }

    /** {@return the FPDUs handed over so far} */
    public long fpdus() {
        return fpdus;
    }

    /** {@return the negotiated maximum ULPDU length} */
    public int maxUlpduLength() {
        return maxUlpduLength;
    }

    /** {@return whether CRCs are checked} */
    public boolean crcEnabled() {
        return crcEnabled;
    }

    /**
     * {@return the first bytes of the FPDU that caused the error (up to {@value #FAILED_HEADER_CAPACITY}),
     * from its ULPDU length on; empty while there is no error}
     */
    public MemorySegment failedHeader() {
        return failedHeader.asSlice(0, failedHeaderLength);
    }
}
