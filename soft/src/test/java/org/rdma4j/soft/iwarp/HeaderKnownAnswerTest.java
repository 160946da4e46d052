// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * FPDUs written out by hand from RFC 5044 4.1 (length, pad, CRC), RFC 5041 4 (DDP header) and RFC 5040
 * 4 (RDMAP control bits, Read Request, Terminate), read with the header codecs and rebuilt with the
 * encoder. CRCs come from the JDK's CRC32C, not from our code.
 */
class HeaderKnownAnswerTest {
    /** RDMA Write, last, STag 0x12345678, TO 0x100000200, "abcde", 3 pad bytes, CRC field 0. */
    static final String WRITE = "00 13 c1 40 12 34 56 78 00 00 00 01 00 00 02 00 61 62 63 64 65 00 00 00 00 00 00 00";
    /** Send with SE and Invalidate, last, invalidate 0xCAFEBABE, MSN 7, MO 0, "ping", then the CRC. */
    static final String SEND_SE_INV = "00 16 41 46 ca fe ba be 00 00 00 00 00 00 00 07 00 00 00 00 70 69 6e 67"
            + " 00 00 00 00";
    /** Read Request, MSN 1: sink 0x101 at 0x1000, 64 bytes, source 0x202 at 0x2000, CRC field 0. */
    static final String READ_REQUEST = "00 2e 41 41 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00 00"
            + " 00 00 01 01 00 00 00 00 00 00 10 00 00 00 00 40 00 00 02 02 00 00 00 00 00 00 20 00 00 00 00 00";
    /** Terminate, MSN 1: LLP / MPA / CRC error, no header copy, CRC field 0. */
    static final String TERMINATE_CRC = "00 16 41 47 00 00 00 00 00 00 00 02 00 00 00 01 00 00 00 00 20 02 00 00"
            + " 00 00 00 00";
    /** Terminate: DDP / tagged / invalid STag, M and D, with the failed Write's header (segment length 5). */
    static final String TERMINATE_DDP = "00 26 41 47 00 00 00 00 00 00 00 02 00 00 00 01 00 00 00 00 11 00 c0 00"
            + " 00 05 c1 40 12 34 56 78 00 00 00 01 00 00 02 00 00 00 00 00";

    private final FpduEncoder plain = new FpduEncoder(false);
    private final FpduEncoder withCrc = new FpduEncoder(true);

    @Test
    void controlFieldsMatchTheValuesSiwSendsForEachOpcode() {
        int[] siw = {0xC140, 0x4141, 0xC142, 0x4143, 0x4144, 0x4145, 0x4146, 0x4147};
        int[] lengths = {16, 48, 16, 20, 20, 20, 20, 24};
        for (int op = 0; op <= Rdmap.MAX_OPCODE; op++) {
            assertEquals(siw[op], Rdmap.control(op, true), Rdmap.name(op));
            assertEquals(lengths[op], Rdmap.headerLength(op), Rdmap.name(op));
            assertEquals(1, Ddp.ddpVersion(siw[op]));
            assertEquals(1, Ddp.rdmapVersion(siw[op]));
            assertEquals(op, Ddp.opcode(siw[op]));
        }
        assertEquals(0x8140, Rdmap.control(Rdmap.RDMA_WRITE, false), "a middle segment clears L");
        assertEquals(-1, Rdmap.headerLength(8));
        assertFalse(Rdmap.known(8));
    }

    @Test
    void writeFpduReadsBackAndIsRebuiltByteForByte() {
        MemorySegment s = Hex.segment(WRITE);
        assertEquals(19, Ddp.ulpduLength(s, 0));
        int control = Ddp.control(s, 0);
        assertTrue(Ddp.tagged(control));
        assertTrue(Ddp.last(control));
        assertEquals(Rdmap.RDMA_WRITE, Ddp.opcode(control));
        assertEquals(0x12345678, Ddp.stag(s, 0));
        assertEquals(0x1_0000_0200L, Ddp.taggedOffset(s, 0));
        MemorySegment out = MemorySegment.ofArray(new byte[28]);
        out.fill((byte) 0x5A); // the encoder must write pad and CRC, not rely on zeroes
        byte[] payload = {0x61, 0x62, 0x63, 0x64, 0x65};
        assertEquals(28, plain.tagged(out, 0, Rdmap.RDMA_WRITE, true, 0x12345678, 0x1_0000_0200L,
                MemorySegment.ofArray(payload), 0, 5));
        assertEquals(WRITE, Hex.of(out));
    }

    @Test
    void sendWithInvalidateCarriesTheStagInTheUlpWordAndACrcOverEverythingBeforeIt() {
        byte[] expected = Hex.withCrc(Hex.bytes(SEND_SE_INV));
        MemorySegment s = MemorySegment.ofArray(expected);
        assertEquals(Rdmap.SEND_SOLICITED_INVALIDATE, Ddp.opcode(Ddp.control(s, 0)));
        assertEquals(0xCAFEBABE, Rdmap.invalidateStag(s, 0));
        assertEquals(Ddp.QUEUE_SEND, Ddp.queueNumber(s, 0));
        assertEquals(7, Ddp.msn(s, 0));
        assertEquals(0, Ddp.messageOffset(s, 0));
        MemorySegment out = MemorySegment.ofArray(new byte[28]);
        assertEquals(28, withCrc.send(out, 0, Rdmap.SEND_SOLICITED_INVALIDATE, true, 0xCAFEBABE, 7, 0,
                MemorySegment.ofArray(new byte[] {0x70, 0x69, 0x6e, 0x67}), 0, 4));
        assertEquals(Hex.of(expected), Hex.of(out));
    }

    @Test
    void aSendWithoutInvalidateSendsZeroInTheUlpWord() {
        MemorySegment out = MemorySegment.ofArray(new byte[24]);
        plain.send(out, 0, Rdmap.SEND, true, 0xCAFEBABE, 1, 0, out, 0, 0);
        assertEquals("00 12 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00", Hex.of(out));
    }

    @Test
    void readRequestBodyFieldsSitWhereRfc5040PutsThem() {
        MemorySegment s = Hex.segment(READ_REQUEST);
        assertEquals(Rdmap.RDMA_READ_REQUEST, Ddp.opcode(Ddp.control(s, 0)));
        assertEquals(Ddp.QUEUE_READ_REQUEST, Ddp.queueNumber(s, 0));
        assertEquals(1, Ddp.msn(s, 0));
        assertEquals(0x101, Rdmap.readSinkStag(s, 0));
        assertEquals(0x1000, Rdmap.readSinkOffset(s, 0));
        assertEquals(64, Rdmap.readSize(s, 0));
        assertEquals(0x202, Rdmap.readSourceStag(s, 0));
        assertEquals(0x2000, Rdmap.readSourceOffset(s, 0));
        MemorySegment out = MemorySegment.ofArray(new byte[52]);
        assertEquals(52, plain.readRequest(out, 0, 1, 0x101, 0x1000, 64, 0x202, 0x2000));
        assertEquals(READ_REQUEST, Hex.of(out));
    }

    @Test
    void terminateForACrcErrorIsTheBareHeader() {
        MemorySegment s = Hex.segment(TERMINATE_CRC);
        int word = Terminate.controlWord(s, 0);
        assertEquals(Terminate.LAYER_LLP, Terminate.layer(word));
        assertEquals(Terminate.LLP_MPA, Terminate.etype(word));
        assertEquals(Terminate.MPA_CRC, Terminate.ecode(word));
        assertEquals(FpduError.CRC_MISMATCH.terminateControl(0), word);
        MemorySegment out = MemorySegment.ofArray(new byte[28]);
        assertEquals(28, plain.terminate(out, 0, 1, word, out, 0, 0));
        assertEquals(TERMINATE_CRC, Hex.of(out));
        assertEquals("LLP/MPA: received MPA CRC does not match (2/0/2)", Terminate.describe(2, 0, 2));
    }

    @Test
    void terminateForADdpErrorCopiesTheFailedHeaderWithItsSegmentLength() {
        MemorySegment s = Hex.segment(TERMINATE_DDP);
        int word = Terminate.controlWord(s, 0);
        assertEquals(Terminate.LAYER_DDP, Terminate.layer(word));
        assertEquals(Terminate.DDP_TAGGED, Terminate.etype(word));
        assertEquals(Terminate.DDP_T_INVALID_STAG, Terminate.ecode(word));
        assertEquals(Terminate.FLAG_SEGMENT_LENGTH_VALID | Terminate.FLAG_DDP_HEADER, word & 0xE000);
        long copy = Terminate.COPIED_HEADER_OFFSET;
        assertEquals(5, Ddp.ulpduLength(s, copy), "the DDP Segment Length sits where the ULPDU length was");
        assertEquals(0x12345678, Ddp.stag(s, copy));
        MemorySegment failed = Hex.segment(WRITE).asSlice(0, 16);
        MemorySegment copied = MemorySegment.ofArray(failed.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        Ddp.ulpduLength(copied, 0, 5);
        MemorySegment out = MemorySegment.ofArray(new byte[44]);
        int control = Terminate.controlWord(Terminate.LAYER_DDP, Terminate.DDP_TAGGED, Terminate.DDP_T_INVALID_STAG,
                Terminate.FLAG_SEGMENT_LENGTH_VALID | Terminate.FLAG_DDP_HEADER);
        assertEquals(44, plain.terminate(out, 0, 1, control, copied, 0, 16));
        assertEquals(TERMINATE_DDP, Hex.of(out));
        assertEquals("DDP/tagged buffer: invalid STag (1/1/0)", Terminate.describe(1, 1, 0));
    }

    @Test
    void everyReassemblerErrorNamesTheTerminateItCalls() {
        assertEquals(0x11040000, FpduError.DDP_VERSION_TAGGED.terminateControl(0));
        assertEquals(0x12060000, FpduError.DDP_VERSION_UNTAGGED.terminateControl(0));
        assertEquals(0x02050000, FpduError.RDMAP_VERSION.terminateControl(0));
        assertEquals(0x02060000, FpduError.UNKNOWN_OPCODE.terminateControl(0));
        assertEquals(0x10000000, FpduError.ULPDU_TOO_SHORT.terminateControl(0));
        for (FpduError e : FpduError.values()) {
            assertFalse(e.words().isBlank());
            assertFalse(e.words().matches("(?s).*\\bcode \\d.*"), e + ": every used code has a name: " + e.words());
        }
    }
}
