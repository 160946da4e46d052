// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.INT;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the 4-byte Immediate Data header carried by the *_WITH_IMMEDIATE opcodes.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                        Immediate Data                         |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>The value is read big-endian, so the int a sender stores is the int the receiver reads;
 * the four bytes on the wire are exactly its network-order encoding.
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class ImmDt {
    /** Length of the header in bytes. */
    public static final int LENGTH = 4;
    /** Offset of the 32-bit immediate value. */
    public static final int IMMEDIATE_OFFSET = 0;

    /**
     * Writes the immediate data at {@code offset}.
     *
     * @param frame the frame
     * @param offset the ImmDt
     * @param immediate the value
     */
    public static void writeAt(MemorySegment frame, long offset, int immediate) {
        frame.set(INT, offset + IMMEDIATE_OFFSET, immediate);
    }

    /**
     * {@return the immediate data at {@code offset}}
     *
     * @param frame the frame
     * @param offset the ImmDt
     */
    public static int immediateAt(MemorySegment frame, long offset) {
        return frame.get(INT, offset + IMMEDIATE_OFFSET);
    }

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public ImmDt() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset where the ImmDt starts
     * @return this
     */
    public ImmDt wrap(MemorySegment segment, long offset) {
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

    /** {@return the immediate value} */
    public int immediate() {
        return segment.get(INT, offset + IMMEDIATE_OFFSET);
    }

    /**
     * Sets the immediate value.
     *
     * @param immediate the immediate value
     * @return this
     */
    public ImmDt immediate(int immediate) {
        segment.set(INT, offset + IMMEDIATE_OFFSET, immediate);
        return this;
    }
}
