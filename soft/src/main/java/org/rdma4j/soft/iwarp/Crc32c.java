// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.wire.BigEndian.BYTE;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The MPA CRC (RFC 5044 section 4.4): CRC32c, {@link CRC32C} of the JDK, over the whole FPDU from its
 * ULPDU length through its pad.
 *
 * <p>Byte order on the wire: the four CRC bytes are the CRC32c value least significant byte first, as
 * siw writes them ({@code siw_crc_final}: {@code cpu_to_le32(~crc)}, the crypto API's crc32c output)
 * and as the iSCSI digest examples of RFC 3720 B.4 show (32 zero bytes give {@code aa 36 91 8a}). Use
 * {@link #writeWire} and {@link #readWire} rather than the big-endian header layouts.
 *
 * <p>Allocation-free in steady state: a segment's {@link ByteBuffer} view is made once and kept for the
 * last two segments seen (a connection's staging buffer and its receive buffer), so the JDK's
 * intrinsic runs on the segment's own memory; a segment larger than 2 GiB goes through a scratch array.
 * Not thread safe; one instance per thread.
 */
public final class Crc32c {
    /** The MPA CRC field: the only little-endian field of the iWARP wire (siw writes it so). */
    private static final ValueLayout.OfInt INT_LITTLE =
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final int SCRATCH_LENGTH = 4096;

    private final CRC32C crc = new CRC32C();
    private final MemorySegment[] seen = new MemorySegment[2];
    private final ByteBuffer[] views = new ByteBuffer[2];
    private int nextSlot;
    private byte[] scratch;

    /** Creates a CRC engine. */
    public Crc32c() {
    }

    /** Starts a new CRC. */
    public void reset() {
        crc.reset();
    }

    /**
     * Adds bytes to the CRC.
     *
     * @param s      the segment
     * @param offset the first byte
     * @param length the number of bytes
     * @throws IndexOutOfBoundsException if the range is not inside {@code s}
     */
    public void update(MemorySegment s, long offset, long length) {
        Objects.checkFromIndexSize(offset, length, s.byteSize());
        if (length == 0) {
            return;
        }
        ByteBuffer view = view(s);
        if (view != null) {
            view.limit((int) (offset + length)).position((int) offset);
            crc.update(view);
            return;
        }
        if (scratch == null) {
            scratch = new byte[SCRATCH_LENGTH];
        }
        long at = offset;
        long remaining = length;
        while (remaining > 0) {
            int n = (int) Math.min(remaining, SCRATCH_LENGTH);
            MemorySegment.copy(s, BYTE, at, scratch, 0, n);
            crc.update(scratch, 0, n);
            at += n;
            remaining -= n;
        }
    }

    /** {@return the CRC32c of the bytes added since the last reset} */
    public int value() {
        return (int) crc.getValue();
    }

    /**
     * {@return the CRC32c of a range, starting afresh}
     *
     * @param s      the segment
     * @param offset the first byte
     * @param length the number of bytes
     */
    public int compute(MemorySegment s, long offset, long length) {
        reset();
        update(s, offset, length);
        return value();
    }

    /**
     * Writes a CRC in MPA wire order (least significant byte first).
     *
     * @param s      the segment
     * @param offset where the four CRC bytes go
     * @param crc32c the CRC value
     */
    public static void writeWire(MemorySegment s, long offset, int crc32c) {
        s.set(INT_LITTLE, offset, crc32c);
    }

    /**
     * {@return the CRC value held in MPA wire order at {@code offset}}
     *
     * @param s      the segment
     * @param offset where the four CRC bytes are
     */
    public static int readWire(MemorySegment s, long offset) {
        return s.get(INT_LITTLE, offset);
    }

    private ByteBuffer view(MemorySegment s) {
        for (int i = 0; i < seen.length; i++) {
            if (seen[i] == s) {
                return views[i];
            }
        }
        if (s.byteSize() > Integer.MAX_VALUE) {
            return null;
        }
        int slot = nextSlot;
        nextSlot = (nextSlot + 1) % seen.length;
        seen[slot] = s;
        views[slot] = s.asByteBuffer();
        return views[slot];
    }
}
