// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** The MPA decoder against random bytes, and every frame the encoder can make, delivered in any pieces. */
class MpaFramePropertiesTest {
    private static final int MAX_FRAME = MpaFrame.HEADER_LENGTH + MpaFrame.MAX_PRIVATE_DATA;

    @Property(tries = 2000)
    void arbitraryBytesGiveOnlyDocumentedStatuses(@ForAll long seed, @ForAll boolean expectReply,
                                                  @ForAll boolean streamEnded, @ForAll boolean rightKey) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] bytes = new byte[random.nextInt(300)];
        random.nextBytes(bytes);
        if (rightKey) {
            byte[] key = (expectReply ? "MPA ID Rep Frame" : "MPA ID Req Frame").getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(key, 0, bytes, 0, Math.min(key.length, bytes.length));
            if (bytes.length > 19 && random.nextBoolean()) {
                bytes[17] = (byte) (1 + random.nextInt(2)); // a valid revision
                bytes[18] = 0;                              // and a length within the limit
            }
        }
        int offset = bytes.length == 0 ? 0 : random.nextInt(Math.min(bytes.length, 3) + 1);
        int available = bytes.length - offset;
        MpaFrame frame = new MpaFrame();
        MpaStatus status = frame.decode(MemorySegment.ofArray(bytes), offset, available, expectReply, streamEnded);
        switch (status) {
            case COMPLETE -> {
                assertTrue(frame.frameLength() <= available && frame.frameLength() <= MAX_FRAME);
                assertEquals(MpaFrame.HEADER_LENGTH + frame.privateDataLength(), frame.frameLength());
                assertTrue(frame.ulpPrivateDataLength() >= 0);
            }
            case NEED_MORE, TRUNCATED -> {
                assertTrue(frame.missingBytes() > 0 && available + frame.missingBytes() <= MAX_FRAME);
                assertEquals(streamEnded, status == MpaStatus.TRUNCATED);
            }
            default -> assertTrue(status.error());
        }
    }

    @Property(tries = 1000)
    void everyEncodableFrameDecodesToWhatWasEncodedWhateverThePieces(
            @ForAll long seed, @ForAll boolean reply, @ForAll boolean enhanced, @ForAll boolean crc,
            @ForAll boolean reject, @ForAll boolean gso, @ForAll @IntRange(max = 0xFFFF) int ird,
            @ForAll @IntRange(max = 0xFFFF) int ord) {
        SplittableRandom random = new SplittableRandom(seed);
        int revision = enhanced || random.nextBoolean() ? 2 : 1;
        int flags = (enhanced ? MpaFrame.FLAG_ENHANCED : 0) | (crc ? MpaFrame.FLAG_CRC : 0)
                | (reject ? MpaFrame.FLAG_REJECT : 0) | (gso ? MpaFrame.FLAG_SIW_GSO : 0);
        byte[] data = new byte[random.nextInt(MpaFrame.maxUlpPrivateData(enhanced) + 1)];
        random.nextBytes(data);
        byte[] wire = new byte[MAX_FRAME + 8];
        int length = MpaFrame.encode(MemorySegment.ofArray(wire), 0, reply, flags, revision, ird, ord,
                MemorySegment.ofArray(data), 0, data.length);
        MemorySegment s = MemorySegment.ofArray(wire);
        MpaFrame frame = new MpaFrame();
        int arrived = 0;
        MpaStatus status = MpaStatus.NEED_MORE;
        while (status == MpaStatus.NEED_MORE) {
            int before = arrived;
            arrived = Math.min(length, arrived + 1 + random.nextInt(random.nextBoolean() ? 4 : 64));
            status = frame.decode(s, 0, arrived, reply, false);
            if (status == MpaStatus.NEED_MORE) {
                assertEquals(arrived < MpaFrame.HEADER_LENGTH ? MpaFrame.HEADER_LENGTH : length,
                        arrived + frame.missingBytes(), "after " + before + " then " + arrived + " bytes");
            }
        }
        assertEquals(MpaStatus.COMPLETE, status);
        assertEquals(length, frame.frameLength());
        assertEquals(flags, frame.flags());
        assertEquals(revision, frame.revision());
        assertEquals(enhanced, frame.enhanced());
        assertEquals(enhanced ? ird : 0, frame.irdWord());
        assertEquals(enhanced ? ord : 0, frame.ordWord());
        assertEquals(data.length, frame.ulpPrivateDataLength());
        assertArrayEquals(data, s.asSlice(frame.ulpPrivateDataOffset(), data.length).toArray(ValueLayout.JAVA_BYTE));
    }
    @Property(tries = 1000)
    void aDecisionNeverChangesAsMoreBytesArrive(@ForAll long seed, @ForAll boolean expectReply) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[] bytes = new byte[random.nextInt(320)];
        random.nextBytes(bytes);
        byte[] key = (expectReply ? "MPA ID Rep Frame" : "MPA ID Req Frame").getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(key, 0, bytes, 0, Math.min(bytes.length, random.nextInt(key.length + 1)));
        if (bytes.length > 19 && random.nextBoolean()) {
            bytes[17] = (byte) random.nextInt(4);
            bytes[18] = (byte) random.nextInt(2);
        }
        MemorySegment s = MemorySegment.ofArray(bytes);
        MpaFrame frame = new MpaFrame();
        MpaStatus decided = null;
        int decidedLength = 0;
        for (int n = 0; n <= bytes.length; n++) {
            MpaStatus status = frame.decode(s, 0, n, expectReply, false);
            if (decided != null) {
                assertEquals(decided, status, "after " + n + " bytes");
                assertEquals(decidedLength, frame.frameLength());
            } else if (status != MpaStatus.NEED_MORE) {
                decided = status;
                decidedLength = frame.frameLength();
            } else {
                assertTrue(frame.missingBytes() > 0);
            }
        }
    }
}
