// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.INT;
import static org.rdma4j.soft.wire.BigEndian.U24;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the 8-byte Datagram Extended Transport Header carried by UD SEND ONLY.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                             Q_Key                             |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |   Reserved    |                  Source QPN                   |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class Deth {
    /** Length of the header in bytes. */
    public static final int LENGTH = 8;
    /** Offset of the 32-bit queue key. */
    public static final int QKEY_OFFSET = 0;
    /** Offset of the reserved byte. */
    public static final int RESERVED_OFFSET = 4;
    /** Offset of the 24-bit source QP number. */
    public static final int SRC_QPN_OFFSET = 5;

    /** The Q_Key of the general services interface (QP1), used by the IB connection manager. */
    public static final int GSI_QKEY = 0x8001_0000;

    /**
     * Writes a DETH (reserved byte zero) at {@code offset} without a flyweight.
     *
     * @param frame  the frame
     * @param offset where the DETH starts
     * @param qkey   the Q_Key
     * @param srcQpn the 24-bit source QP number
     */
    public static void writeAt(MemorySegment frame, long offset, int qkey, int srcQpn) {
        frame.set(INT, offset + QKEY_OFFSET, qkey);
        frame.set(INT, offset + RESERVED_OFFSET, srcQpn & U24);
    }

    /**
     * {@return the Q_Key of the DETH at {@code offset}}
     *
     * @param frame the frame
     * @param offset the DETH
     */
    public static int qkeyAt(MemorySegment frame, long offset) {
        return frame.get(INT, offset + QKEY_OFFSET);
    }

    /**
     * {@return the source QP number of the DETH at {@code offset}}
     *
     * @param frame the frame
     * @param offset the DETH
     */
    public static int srcQpnAt(MemorySegment frame, long offset) {
        return frame.get(INT, offset + RESERVED_OFFSET) & U24;
    }

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public Deth() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset where the DETH starts
     * @return this
     */
    public Deth wrap(MemorySegment segment, long offset) {
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

    /** {@return the queue key} */
    public int qkey() {
        return segment.get(INT, offset + QKEY_OFFSET);
    }

    /**
     * Sets the queue key.
     *
     * @param qkey the queue key
     * @return this
     */
    public Deth qkey(int qkey) {
        segment.set(INT, offset + QKEY_OFFSET, qkey);
        return this;
    }

    /** {@return the 24-bit source QP number} */
    public int srcQpn() {
        return segment.get(INT, offset + RESERVED_OFFSET) & U24;
    }

    /**
     * Sets the source QP number; bits above 24 are ignored.
     *
     * @param srcQpn the source QP number; bits above 24 are ignored
     * @return this
     */
    public Deth srcQpn(int srcQpn) {
        long at = offset + RESERVED_OFFSET;
        segment.set(INT, at, segment.get(INT, at) & ~U24 | srcQpn & U24);
        return this;
    }
}
