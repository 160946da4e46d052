// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.INT;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the 4-byte Invalidate Extended Transport Header carried by SEND LAST/ONLY WITH
 * INVALIDATE.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                      R_Key to invalidate                      |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class Ieth {
    /** Length of the header in bytes. */
    public static final int LENGTH = 4;
    /** Offset of the 32-bit remote key to invalidate. */
    public static final int RKEY_OFFSET = 0;

    /**
     * Writes the R_Key to invalidate at {@code offset}.
     *
     * @param frame the frame
     * @param offset the IETH
     * @param rkey the R_Key
     */
    public static void writeAt(MemorySegment frame, long offset, int rkey) {
        frame.set(INT, offset + RKEY_OFFSET, rkey);
    }

    /**
     * {@return the R_Key of the IETH at {@code offset}}
     *
     * @param frame the frame
     * @param offset the IETH
     */
    public static int rkeyAt(MemorySegment frame, long offset) {
        return frame.get(INT, offset + RKEY_OFFSET);
    }

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public Ieth() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset where the IETH starts
     * @return this
     */
    public Ieth wrap(MemorySegment segment, long offset) {
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

    /** {@return the remote key the responder invalidates} */
    public int rkey() {
        return segment.get(INT, offset + RKEY_OFFSET);
    }

    /**
     * Sets the remote key the responder invalidates.
     *
     * @param rkey the remote key the responder invalidates
     * @return this
     */
    public Ieth rkey(int rkey) {
        segment.set(INT, offset + RKEY_OFFSET, rkey);
        return this;
    }
}
