// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.INT;
import static org.rdma4j.soft.wire.BigEndian.LONG;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the 16-byte RDMA Extended Transport Header carried by RDMA WRITE FIRST/ONLY and
 * RDMA READ requests.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                        Virtual Address                        |
 *  |                                                               |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                             R_Key                             |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                          DMA Length                           |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class Reth {
    /** Length of the header in bytes. */
    public static final int LENGTH = 16;
    /** Offset of the 64-bit remote virtual address. */
    public static final int VIRTUAL_ADDRESS_OFFSET = 0;
    /** Offset of the 32-bit remote key. */
    public static final int RKEY_OFFSET = 8;
    /** Offset of the 32-bit (unsigned) length of the whole transfer. */
    public static final int DMA_LENGTH_OFFSET = 12;

    /**
     * Writes a RETH at {@code offset} of {@code frame} without a flyweight. Stateless; safe for any thread.
     *
     * @param frame          the frame
     * @param offset         where the RETH starts
     * @param virtualAddress the remote virtual address
     * @param rkey           the R_Key
     * @param dmaLength      the DMA length
     */
    public static void writeAt(MemorySegment frame, long offset, long virtualAddress, int rkey, int dmaLength) {
        frame.set(LONG, offset + VIRTUAL_ADDRESS_OFFSET, virtualAddress);
        frame.set(INT, offset + RKEY_OFFSET, rkey);
        frame.set(INT, offset + DMA_LENGTH_OFFSET, dmaLength);
    }

    /**
     * {@return the virtual address of the RETH at {@code offset}}
     *
     * @param frame the frame
     * @param offset the RETH
     */
    public static long virtualAddressAt(MemorySegment frame, long offset) {
        return frame.get(LONG, offset + VIRTUAL_ADDRESS_OFFSET);
    }

    /**
     * {@return the R_Key of the RETH at {@code offset}}
     *
     * @param frame the frame
     * @param offset the RETH
     */
    public static int rkeyAt(MemorySegment frame, long offset) {
        return frame.get(INT, offset + RKEY_OFFSET);
    }

    /**
     * {@return the DMA length of the RETH at {@code offset}}
     *
     * @param frame the frame
     * @param offset the RETH
     */
    public static int dmaLengthAt(MemorySegment frame, long offset) {
        return frame.get(INT, offset + DMA_LENGTH_OFFSET);
    }

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public Reth() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset where the RETH starts
     * @return this
     */
    public Reth wrap(MemorySegment segment, long offset) {
        this.segment = segment;
        this.offset = offset;
        return this;
    }

    /** {@return the wrapped segment} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return where the header starts in {@link #segment()}} */
    public long offset() {
        return offset;
    }

    /** {@return the remote virtual address} */
    public long virtualAddress() {
        return segment.get(LONG, offset + VIRTUAL_ADDRESS_OFFSET);
    }

    /**
     * Sets the remote virtual address.
     *
     * @param virtualAddress the remote virtual address
     * @return this
     */
    public Reth virtualAddress(long virtualAddress) {
        segment.set(LONG, offset + VIRTUAL_ADDRESS_OFFSET, virtualAddress);
        return this;
    }

    /** {@return the remote key} */
    public int rkey() {
        return segment.get(INT, offset + RKEY_OFFSET);
    }

    /**
     * Sets the remote key.
     *
     * @param rkey the remote key
     * @return this
     */
    public Reth rkey(int rkey) {
        segment.set(INT, offset + RKEY_OFFSET, rkey);
        return this;
    }

    /** {@return the length of the whole transfer, unsigned; see {@link Integer#toUnsignedLong(int)}} */
    public int dmaLength() {
        return segment.get(INT, offset + DMA_LENGTH_OFFSET);
    }

    /**
     * Sets the length of the whole transfer, unsigned.
     *
     * @param dmaLength the length of the whole transfer, unsigned
     * @return this
     */
    public Reth dmaLength(int dmaLength) {
        segment.set(INT, offset + DMA_LENGTH_OFFSET, dmaLength);
        return this;
    }
}
