// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The reassembler against streams it cannot predict: any chunking of a good stream gives the same
 * FPDUs; random and mutated bytes give only documented errors, never an exception or a view outside
 * the bytes; a flipped bit under CRC never reaches the handler.
 */
class FpduReassemblerPropertiesTest {
    @Property(tries = 400)
    void everyChunkingOfAGoodStreamGivesTheSameFpdus(@ForAll long seed, @ForAll boolean crc) {
        SplittableRandom random = new SplittableRandom(seed);
        FpduStreams stream = FpduStreams.random(random, crc, 12, 300);
        Collected whole = new Collected();
        assertEquals(FpduError.NONE, Collected.feed(new FpduReassembler(65535, crc, whole), stream.bytes));
        assertEquals(stream.fpdus, whole.fpdus);
        Collected pieces = new Collected();
        FpduReassembler r = new FpduReassembler(65535, crc, pieces);
        assertEquals(FpduError.NONE, Collected.feed(r, stream.bytes, FpduStreams.chunking(random, stream.bytes.length)));
        assertEquals(stream.fpdus, pieces.fpdus);
        assertEquals(false, r.midFpdu());
    }

    @Property(tries = 1000)
    void arbitraryBytesEndOnlyInDocumentedErrorsAndViewsInsideTheBytes(@ForAll long seed,
                                                                       @ForAll @IntRange(max = 2) int mode,
                                                                       @ForAll boolean crc) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] bytes = switch (mode) {
            case 0 -> randomBytes(random, random.nextInt(600));
            case 1 -> mutated(random, FpduStreams.random(random, crc, 6, 80).bytes);
            default -> {
                byte[] good = FpduStreams.random(random, crc, 6, 80).bytes;
                yield java.util.Arrays.copyOf(good, random.nextInt(good.length + 1));
            }
        };
        int max = 14 + random.nextInt(65535 - 14 + 1);
        Checked whole = new Checked();
        FpduReassembler one = new FpduReassembler(max, crc, whole);
        FpduError e1 = Collected.feed(one, bytes);
        Checked pieces = new Checked();
        FpduReassembler many = new FpduReassembler(max, crc, pieces);
        FpduError e2 = Collected.feed(many, bytes, FpduStreams.chunking(random, bytes.length));
        assertEquals(e1, e2, "the same error whichever way the stream is cut");
        assertEquals(whole.fpdus, pieces.fpdus, "the same FPDUs whichever way the stream is cut");
        assertEquals(one.fpdus(), whole.fpdus.size());
        assertTrue(one.failedHeader().byteSize() <= FpduReassembler.FAILED_HEADER_CAPACITY);
        assertEquals(e1 == FpduError.NONE, one.failedHeader().byteSize() == 0);
    }

    @Property(tries = 1000)
    void aFlippedBitUnderCrcNeverReachesTheHandler(@ForAll long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        FpduStreams stream = FpduStreams.random(random, true, 8, 200);
        byte[] bytes = stream.bytes.clone();
        int bit = random.nextInt(bytes.length * 8);
        bytes[bit / 8] ^= (byte) (1 << (bit % 8));
        int hit = 0;
        while (hit + 1 < stream.starts.length && stream.starts[hit + 1] <= bit / 8) {
            hit++;
        }
        Collected got = new Collected();
        FpduReassembler r = new FpduReassembler(65535, true, got);
        FpduError e = Collected.feed(r, bytes, FpduStreams.chunking(random, bytes.length));
        assertEquals(stream.fpdus.subList(0, hit), got.fpdus, "the FPDUs before the flip, intact, and no more");
        assertTrue(e != FpduError.NONE || r.midFpdu(), "the damage is reported or the FPDU never completes");
        assertNotEquals(stream.fpdus.size(), got.fpdus.size());
    }

    private static byte[] randomBytes(SplittableRandom random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private static byte[] mutated(SplittableRandom random, byte[] good) {
        byte[] b = good.clone();
        for (int i = 1 + random.nextInt(4); i > 0; i--) {
            b[random.nextInt(b.length)] = (byte) random.nextInt(256);
        }
        return b;
    }

    /** Collects like {@link Collected} and checks that every view lies inside its segment. */
    private static final class Checked implements FpduReassembler.Handler {
        final java.util.List<String> fpdus = new java.util.ArrayList<>();
        private final Collected inner = new Collected();

        @Override
        public void onFpdu(Fpdu f) {
            MemorySegment s = f.segment();
            assertTrue(f.offset() >= 0 && f.offset() + f.fpduLength() <= s.byteSize(), "FPDU inside its segment");
            assertTrue(f.payloadLength() >= 0, "payload length");
            assertTrue(f.payloadOffset() + f.payloadLength() <= f.offset() + f.fpduLength() - FpduEncoder.CRC_SIZE);
            assertTrue(Rdmap.known(f.opcode()));
            inner.onFpdu(f);
            fpdus.add(inner.fpdus.getLast());
        }
    }
}
