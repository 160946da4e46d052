// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.LONG;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the 8-byte Atomic Acknowledge Extended Transport Header carried by ATOMIC
 * ACKNOWLEDGE after the AETH.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                      Original Remote Data                     |
 *  |                                                               |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class AtomicAckEth {
    /** Length of the header in bytes. */
    public static final int LENGTH = 8;
    /** Offset of the 64-bit value the target held before the atomic operation. */
    public static final int ORIGINAL_VALUE_OFFSET = 0;

    /**
     * Writes the original value at {@code offset}.
     *
     * @param frame the frame
     * @param offset the AtomicAckETH
     * @param value the value
     */
    public static void writeAt(MemorySegment frame, long offset, long value) {
        frame.set(LONG, offset + ORIGINAL_VALUE_OFFSET, value);
    }

    /**
     * {@return the original value at {@code offset}}
     *
     * @param frame the frame
     * @param offset the AtomicAckETH
     */
    public static long originalValueAt(MemorySegment frame, long offset) {
        return frame.get(LONG, offset + ORIGINAL_VALUE_OFFSET);
    }

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public AtomicAckEth() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset where the AtomicAckETH starts
     * @return this
     */
    public AtomicAckEth wrap(MemorySegment segment, long offset) {
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

    /** {@return the value the target held before the operation} */
    public long originalValue() {
        return segment.get(LONG, offset + ORIGINAL_VALUE_OFFSET);
    }

    /**
     * Sets the value the target held before the operation.
     *
     * @param originalValue the value the target held before the operation
     * @return this
     */
    public AtomicAckEth originalValue(long originalValue) {
        segment.set(LONG, offset + ORIGINAL_VALUE_OFFSET, originalValue);
        return this;
    }
}
