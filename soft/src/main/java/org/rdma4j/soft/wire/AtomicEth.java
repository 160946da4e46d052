// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.rdma4j.soft.wire.BigEndian.INT;
import static org.rdma4j.soft.wire.BigEndian.LONG;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the 28-byte Atomic Extended Transport Header carried by COMPARE SWAP and
 * FETCH ADD requests.
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
 *  |                     Swap (or Add) Data                        |
 *  |                                                               |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                         Compare Data                          |
 *  |                                                               |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>Not thread safe; one instance per thread.
 */
public final class AtomicEth {
    /** Length of the header in bytes. */
    public static final int LENGTH = 28;
    /** Offset of the 64-bit remote virtual address (8-byte aligned in the responder's memory). */
    public static final int VIRTUAL_ADDRESS_OFFSET = 0;
    /** Offset of the 32-bit remote key. */
    public static final int RKEY_OFFSET = 8;
    /** Offset of the 64-bit swap value (COMPARE SWAP) or addend (FETCH ADD). */
    public static final int SWAP_ADD_OFFSET = 12;
    /** Offset of the 64-bit compare value (COMPARE SWAP only). */
    public static final int COMPARE_OFFSET = 20;

    /**
     * Writes an AtomicETH at {@code offset} without a flyweight.
     *
     * @param frame          the frame
     * @param offset         where the AtomicETH starts
     * @param virtualAddress the remote virtual address
     * @param rkey           the R_Key
     * @param swapAdd        the swap or add operand
     * @param compare        the compare operand
     */
    public static void writeAt(MemorySegment frame, long offset, long virtualAddress, int rkey, long swapAdd,
                               long compare) {
        frame.set(LONG, offset + VIRTUAL_ADDRESS_OFFSET, virtualAddress);
        frame.set(INT, offset + RKEY_OFFSET, rkey);
        frame.set(LONG, offset + SWAP_ADD_OFFSET, swapAdd);
        frame.set(LONG, offset + COMPARE_OFFSET, compare);
    }

    /**
     * {@return the virtual address at {@code offset}}
     *
     * @param frame the frame
     * @param offset the AtomicETH
     */
    public static long virtualAddressAt(MemorySegment frame, long offset) {
        return frame.get(LONG, offset + VIRTUAL_ADDRESS_OFFSET);
    }

    /**
     * {@return the R_Key at {@code offset}}
     *
     * @param frame the frame
     * @param offset the AtomicETH
     */
    public static int rkeyAt(MemorySegment frame, long offset) {
        return frame.get(INT, offset + RKEY_OFFSET);
    }

    /**
     * {@return the swap/add operand at {@code offset}}
     *
     * @param frame the frame
     * @param offset the AtomicETH
     */
    public static long swapAddAt(MemorySegment frame, long offset) {
        return frame.get(LONG, offset + SWAP_ADD_OFFSET);
    }

    /**
     * {@return the compare operand at {@code offset}}
     *
     * @param frame the frame
     * @param offset the AtomicETH
     */
    public static long compareAt(MemorySegment frame, long offset) {
        return frame.get(LONG, offset + COMPARE_OFFSET);
    }

    private MemorySegment segment;
    private long offset;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    public AtomicEth() {
    }

    /**
     * Points this flyweight at a header.
     *
     * @param segment the frame
     * @param offset where the AtomicETH starts
     * @return this
     */
    public AtomicEth wrap(MemorySegment segment, long offset) {
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
    public AtomicEth virtualAddress(long virtualAddress) {
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
    public AtomicEth rkey(int rkey) {
        segment.set(INT, offset + RKEY_OFFSET, rkey);
        return this;
    }

    /** {@return the swap value or addend} */
    public long swapAdd() {
        return segment.get(LONG, offset + SWAP_ADD_OFFSET);
    }

    /**
     * Sets the swap value or addend.
     *
     * @param swapAdd the swap value or addend
     * @return this
     */
    public AtomicEth swapAdd(long swapAdd) {
        segment.set(LONG, offset + SWAP_ADD_OFFSET, swapAdd);
        return this;
    }

    /** {@return the compare value} */
    public long compare() {
        return segment.get(LONG, offset + COMPARE_OFFSET);
    }

    /**
     * Sets the compare value.
     *
     * @param compare the compare value
     * @return this
     */
    public AtomicEth compare(long compare) {
        segment.set(LONG, offset + COMPARE_OFFSET, compare);
        return this;
    }
}
