// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Finding FPDUs in a TCP stream: hand-written streams, every framing error, CRC, chunking. */
class FpduReassemblerTest {
    private static final String SEND_ZERO = "00 12 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00";
    private static final byte[] STREAM = Hex.concat(Hex.bytes(HeaderKnownAnswerTest.WRITE), Hex.bytes(SEND_ZERO),
            Hex.bytes(HeaderKnownAnswerTest.READ_REQUEST));

    private final Collected got = new Collected();

    @Test
    void threeFpdusInOneChunkComeOutWithTheirFields() {
        FpduReassembler r = new FpduReassembler(65535, false, got);
        assertEquals(FpduError.NONE, Collected.feed(r, STREAM));
        assertEquals(List.of(HeaderKnownAnswerTest.WRITE, SEND_ZERO, HeaderKnownAnswerTest.READ_REQUEST), got.fpdus);
        assertEquals(3, r.fpdus());
        assertFalse(r.midFpdu());
    }

    @Test
    void fieldsAreReadableDuringTheCallback() {
        StringBuilder seen = new StringBuilder();
        FpduReassembler r = new FpduReassembler(65535, false, f -> seen.append(Rdmap.name(f.opcode()))
                .append(f.tagged() ? " stag=" + Integer.toHexString(f.stag()) + " to=" + Long.toHexString(f.taggedOffset())
                        : " qn=" + f.queueNumber() + " msn=" + f.msn() + " mo=" + f.messageOffset())
                .append(" payload=").append(f.payloadLength()).append(" at ").append(f.payloadOffset() - f.offset())
                .append(f.last() ? " L" : "").append("; "));
        Collected.feed(r, STREAM, 1);
        assertEquals("RDMA Write stag=12345678 to=100000200 payload=5 at 16 L; "
                + "Send qn=0 msn=1 mo=0 payload=0 at 20 L; "
                + "RDMA Read Request qn=1 msn=1 mo=0 payload=0 at 48 L; ", seen.toString());
    }

    @Test
    void oneByteAtATimeGivesTheSameFpdusAsOneChunk() {
        FpduReassembler r = new FpduReassembler(65535, false, got);
        assertEquals(FpduError.NONE, Collected.feed(r, STREAM, 1));
        assertEquals(List.of(HeaderKnownAnswerTest.WRITE, SEND_ZERO, HeaderKnownAnswerTest.READ_REQUEST), got.fpdus);
    }

    @Test
    void anFpduWholeInTheChunkIsHandedOverWhereItLiesAndAStraddlingOneFromStaging() {
        FpduReassembler r = new FpduReassembler(65535, false, got);
        MemorySegment chunk = MemorySegment.ofArray(STREAM);
        r.receive(chunk, 0, 30); // the Write, then 2 bytes of the Send
        assertTrue(r.midFpdu());
        assertEquals(2, r.stagedBytes());
        r.receive(chunk, 30, STREAM.length - 30);
        assertSame(chunk, got.segments.get(0));
        assertNotSame(chunk, got.segments.get(1));
        assertSame(chunk, got.segments.get(2));
        assertSame(got.views.get(0), got.views.get(2), "one reused view");
    }

    @Test
    void crcIsCheckedWhenNegotiatedAndIgnoredOtherwise() {
        byte[] good = Hex.withCrc(Hex.bytes(HeaderKnownAnswerTest.SEND_SE_INV));
        assertEquals(FpduError.NONE, Collected.feed(new FpduReassembler(65535, true, got), good));
        byte[] bad = good.clone();
        bad[21] ^= 0x01; // a payload bit
        FpduReassembler checking = new FpduReassembler(65535, true, got);
        assertEquals(FpduError.CRC_MISMATCH, Collected.feed(checking, bad, 5));
        assertEquals(1, got.fpdus.size(), "the bad FPDU is not handed over");
        assertEquals(Terminate.LAYER_LLP, checking.error().layer());
        assertEquals(Terminate.MPA_CRC, checking.error().ecode());
        assertEquals(Hex.of(java.util.Arrays.copyOf(bad, 28)), Hex.of(checking.failedHeader()),
                "the failed FPDU's first bytes are kept for the Terminate");
        assertEquals(FpduError.NONE, Collected.feed(new FpduReassembler(65535, false, got), bad),
                "without CRC the field is not looked at");
    }

    @Test
    void padBytesAreIgnoredButCoveredByTheCrc() {
        byte[] odd = Hex.bytes(HeaderKnownAnswerTest.WRITE);
        odd[22] = 0x7f; // a pad byte
        assertEquals(FpduError.NONE, Collected.feed(new FpduReassembler(65535, false, got), odd));
        byte[] crcd = Hex.withCrc(Hex.bytes(HeaderKnownAnswerTest.WRITE));
        crcd[22] = 0x7f;
        assertEquals(FpduError.CRC_MISMATCH, Collected.feed(new FpduReassembler(65535, true, got), crcd));
    }

    @Test
    void aUlpduOverTheMaximumIsRefusedFromItsFirstFourBytes() {
        FpduReassembler r = new FpduReassembler(1000, false, got);
        MemorySegment s = Hex.segment("03 e9 c1 40");
        assertEquals(FpduError.ULPDU_TOO_LONG, r.receive(s, 0, 4), "1001 > 1000: no waiting for the body");
        assertEquals(Terminate.LAYER_DDP, r.error().layer());
        assertEquals(Terminate.DDP_CATASTROPHIC, r.error().etype());
        FpduReassembler ok = new FpduReassembler(1000, false, got);
        assertEquals(FpduError.NONE, ok.receive(Hex.segment("03 e8 c1 40"), 0, 4));
        assertTrue(ok.midFpdu());
    }

    @Test
    void aUlpduShorterThanItsOpcodesHeaderIsRefused() {
        assertEquals(FpduError.ULPDU_TOO_SHORT, one("00 0d c1 40"), "a Write needs 14");
        assertEquals(FpduError.ULPDU_TOO_SHORT, one("00 11 41 43"), "a Send needs 18");
        assertEquals(FpduError.ULPDU_TOO_SHORT, one("00 2d 41 41"), "a Read Request needs 46");
        assertEquals(FpduError.ULPDU_TOO_SHORT, one("00 13 41 47"), "a Terminate needs 22");
        assertEquals(FpduError.NONE, one("00 0e c1 40"));
    }

    @Test
    void versionAndOpcodeErrorsCallTheTerminateSiwSends() {
        assertEquals(FpduError.DDP_VERSION_TAGGED, one("00 13 c0 40"));
        assertEquals(FpduError.DDP_VERSION_TAGGED, one("00 13 c2 40"));
        assertEquals(FpduError.DDP_VERSION_UNTAGGED, one("00 12 42 43"));
        assertEquals(FpduError.RDMAP_VERSION, one("00 12 41 83"));
        assertEquals(FpduError.RDMAP_VERSION, one("00 12 41 03"));
        assertEquals(FpduError.UNKNOWN_OPCODE, one("00 12 41 48"));
        assertEquals(FpduError.UNKNOWN_OPCODE, one("00 12 41 4f"));
        assertEquals(FpduError.TAGGED_FLAG_MISMATCH, one("00 12 c1 43"), "a tagged Send");
        assertEquals(FpduError.TAGGED_FLAG_MISMATCH, one("00 12 41 40"), "an untagged Write");
        assertEquals(FpduError.NONE, one("00 12 7d 73"), "reserved bits are not checked");
    }

    @Test
    void afterAnErrorNothingMoreIsHandedOver() {
        byte[] stream = Hex.concat(Hex.bytes("00 12 41 48"), STREAM);
        FpduReassembler r = new FpduReassembler(65535, false, got);
        assertEquals(FpduError.UNKNOWN_OPCODE, Collected.feed(r, stream, 7));
        assertEquals(FpduError.UNKNOWN_OPCODE, r.receive(MemorySegment.ofArray(STREAM), 0, STREAM.length));
        assertEquals(0, got.fpdus.size());
        assertEquals("00 12 41 48 00 13 c1", Hex.of(r.failedHeader()),
                "what had arrived of the failed FPDU (by its own length) in the chunk that showed the error");
    }

    @Test
    void aRangeOutsideTheChunkIsRefusedBeforeAnyByteIsRead() {
        FpduReassembler r = new FpduReassembler(65535, false, got);
        MemorySegment s = MemorySegment.ofArray(STREAM);
        assertThrows(IndexOutOfBoundsException.class, () -> r.receive(s, 70, 40));
        assertThrows(IndexOutOfBoundsException.class, () -> r.receive(s, -1, 4));
        assertEquals(0, r.stagedBytes());
        assertEquals(FpduError.NONE, r.receive(s, 0, 0));
    }

    @Test
    void aLongWriteCutToTheMssComesBackWhole() {
        int mss = 1460;
        int payload = FpduEncoder.maxPayload(mss, Ddp.TAGGED_HEADER_LENGTH);
        byte[] message = new byte[10_000];
        new java.util.SplittableRandom(3).nextBytes(message);
        MemorySegment tx = MemorySegment.ofArray(new byte[20_000]);
        FpduEncoder encoder = new FpduEncoder(true);
        int at = 0;
        for (int sent = 0; sent < message.length; sent += payload) {
            int n = Math.min(payload, message.length - sent);
            int fpdu = encoder.tagged(tx, at, Rdmap.RDMA_WRITE, sent + n == message.length, 0x42, 0x9000 + sent,
                    MemorySegment.ofArray(message), sent, n);
            assertTrue(fpdu <= (mss & ~7), "one FPDU per segment");
            at += fpdu;
        }
        byte[] placed = new byte[message.length];
        int[] lasts = {0};
        FpduReassembler r = new FpduReassembler(65535, true, f -> {
            MemorySegment.copy(f.segment(), ValueLayout.JAVA_BYTE, f.payloadOffset(), placed,
                    (int) (f.taggedOffset() - 0x9000), f.payloadLength());
            lasts[0] += f.last() ? 1 : 0;
        });
        assertEquals(FpduError.NONE, r.receive(tx, 0, at));
        assertEquals(7, r.fpdus(), "10000 bytes in pieces of 1436");
        assertEquals(1, lasts[0]);
        assertTrue(java.util.Arrays.equals(message, placed));
    }

    @Test
    void reassemblyAllocatesNothingPerFpduOrPerChunk() {
        Assumptions.assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean,
                "needs per-thread allocation counters");
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled());
        MemorySegment wire = Arena.ofAuto().allocate(4096);
        FpduEncoder encoder = new FpduEncoder(true);
        int n = 0;
        for (int i = 0; i < 20; i++) {
            n += encoder.send(wire, n, Rdmap.SEND, true, 0, i + 1, 0, wire, 3000, 100 + i);
        }
        int length = n;
        long[] sum = {0};
        FpduReassembler r = new FpduReassembler(65535, true, f -> sum[0] += f.msn() + f.payloadLength());
        for (int i = 0; i < 3_000; i++) {
            feedInPieces(r, wire, length, i);
        }
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 2_000; i++) {
            feedInPieces(r, wire, length, i);
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertEquals(FpduError.NONE, r.error());
        assertTrue(allocated < 10_000, "allocated " + allocated + " bytes for 40000 FPDUs (sum " + sum[0] + ")");
    }

    private static void feedInPieces(FpduReassembler r, MemorySegment wire, int length, int seed) {
        int cut = 1 + (seed * 37) % (length - 1);
        r.receive(wire, 0, cut);
        r.receive(wire, cut, length - cut);
    }

    private FpduError one(String prefix) {
        return new FpduReassembler(65535, false, got).receive(Hex.segment(prefix), 0, 4);
    }
}
