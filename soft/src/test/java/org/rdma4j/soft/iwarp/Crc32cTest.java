// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The MPA CRC: CRC32c, its wire byte order, and that it reads any segment without allocating. */
class Crc32cTest {
    private final Crc32c crc = new Crc32c();

    @Test
    void thirtyTwoZeroBytesGiveTheIscsiDigestBytesOnTheWire() {
        MemorySegment zeros = MemorySegment.ofArray(new byte[32]);
        MemorySegment field = MemorySegment.ofArray(new byte[4]);
        Crc32c.writeWire(field, 0, crc.compute(zeros, 0, 32));
        assertEquals("aa 36 91 8a", Hex.of(field), "RFC 3720 B.4: 32 bytes of zeroes");
        assertEquals(0x8A9136AA, Crc32c.readWire(field, 0));
    }

    @Test
    void theStandardCheckStringGivesTheCrc32cCheckValue() {
        byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
        assertEquals(0xE3069283, crc.compute(MemorySegment.ofArray(check), 0, check.length));
    }

    @Test
    void heapNativeAndSlicedSegmentsGiveTheSameCrc() {
        byte[] data = new byte[10_000];
        new SplittableRandom(7).nextBytes(data);
        MemorySegment heap = MemorySegment.ofArray(data);
        MemorySegment nativeCopy = Arena.ofAuto().allocate(data.length);
        nativeCopy.copyFrom(heap);
        int expected = crc.compute(heap, 100, 5000);
        assertEquals(expected, crc.compute(nativeCopy, 100, 5000));
        assertEquals(expected, crc.compute(nativeCopy.asSlice(100), 0, 5000));
        crc.reset();
        crc.update(nativeCopy, 100, 1);
        crc.update(heap, 101, 2999);
        crc.update(nativeCopy, 3100, 2000);
        assertEquals(expected, crc.value(), "piecewise over alternating segments");
        assertEquals(expected, crc.compute(nativeCopy.asReadOnly(), 100, 5000), "read-only view");
    }

    @Test
    void rangesOutsideTheSegmentAreRefusedBeforeAnyByteIsRead() {
        MemorySegment s = MemorySegment.ofArray(new byte[16]);
        assertThrows(IndexOutOfBoundsException.class, () -> crc.update(s, 10, 7));
        assertThrows(IndexOutOfBoundsException.class, () -> crc.update(s, -1, 2));
        assertThrows(IndexOutOfBoundsException.class, () -> crc.update(s, 0, -1));
    }

    @Test
    void crcOverKnownSegmentsAllocatesNothing() {
        Assumptions.assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean,
                "needs per-thread allocation counters");
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled());
        MemorySegment a = Arena.ofAuto().allocate(2048);
        MemorySegment b = MemorySegment.ofArray(new byte[2048]);
        int sink = 0;
        for (int i = 0; i < 20_000; i++) {
            sink += crc.compute(a, i & 63, 1500) + crc.compute(b, i & 31, 1000);
        }
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10_000; i++) {
            sink += crc.compute(a, i & 63, 1500) + crc.compute(b, i & 31, 1000);
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < 10_000, "allocated " + allocated + " bytes in 10000 iterations (sink " + sink + ")");
    }

    @Test
    void theWireOrderIsNotTheHeaderOrder() {
        MemorySegment field = MemorySegment.ofArray(new byte[4]);
        Crc32c.writeWire(field, 0, 0x11223344);
        assertEquals("44 33 22 11", Hex.of(field));
        assertEquals(0x44332211, field.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 0));
    }
}
