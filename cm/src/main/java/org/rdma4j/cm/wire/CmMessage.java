// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Base of the CM message flyweights: a view of one 256-byte MAD whose fields are addressed by their
 * offset in the MAD (the offsets of IBTA vol. 1 chapter 12 plus the 24-byte MAD header), so the
 * constants of each subclass can be checked against the specification's tables directly.
 *
 * <p>Not thread safe; one instance per thread.
 */
public abstract class CmMessage {
    /** Every CM message fills one MAD of this many bytes. */
    public static final int MAD_SIZE = 256;

    /** The wrapped MAD. */
    protected MemorySegment mad;

    /** Creates an unwrapped flyweight; call {@link #wrap} before use. */
    protected CmMessage() {
    }

    /**
     * Points this flyweight at a MAD of at least {@link #MAD_SIZE} bytes.
     *
     * @param segment the MAD
     * @return this
     * @throws IllegalArgumentException when {@code segment} is shorter than a MAD
     */
    public CmMessage wrap(MemorySegment segment) {
        if (Objects.requireNonNull(segment, "segment").byteSize() < MAD_SIZE) {
            throw new IllegalArgumentException("a MAD has " + MAD_SIZE + " bytes, got " + segment.byteSize());
        }
        this.mad = segment;
        return this;
    }

    /** {@return the wrapped MAD} */
    public MemorySegment segment() {
        return mad;
    }

    /** {@return the attribute id this message has in the MAD header} */
    public abstract int attributeId();

    /** {@return where the private data starts} */
    public abstract int privateDataOffset();

    /** {@return how many bytes of private data the message carries (the whole tail of the MAD)} */
    public final int privateDataLength() {
        return MAD_SIZE - privateDataOffset();
    }

    /**
     * Zeroes the MAD and writes a CM MAD header (base version 1, class 0x07 version 2, method SEND) with
     * this message's attribute id: the first step of building a message to send.
     *
     * @param transactionId the transaction id (TransactionID; an answer carries its request's)
     */
    public void clearAndInit(long transactionId) {
        mad.asSlice(0, MAD_SIZE).fill((byte) 0);
        MadHeader.writeCm(mad, MadHeader.METHOD_SEND, attributeId(), transactionId);
    }

    /**
     * Copies {@code length} bytes of private data to {@code dst}.
     *
     * @param dst where to
     * @param dstOffset from which index of {@code dst}
     * @param length how many bytes (at most {@link #privateDataLength()})
     * @throws IllegalArgumentException when {@code length} is negative or beyond the field
     */
    public final void getPrivateData(byte[] dst, int dstOffset, int length) {
        checkLength(length);
        MemorySegment.copy(mad, Be.BYTE, privateDataOffset(), dst, dstOffset, length);
    }

    /** {@return a copy of all of the private data} */
    public final byte[] privateData() {
        byte[] b = new byte[privateDataLength()];
        getPrivateData(b, 0, b.length);
        return b;
    }

    /**
     * Writes {@code length} bytes of private data from {@code src}; the rest of the field is zeroed.
     *
     * @param src the bytes
     * @param srcOffset from which index
     * @param length how many (at most {@link #privateDataLength()})
     * @throws IllegalArgumentException when {@code length} is negative or beyond the field
     */
    public final void setPrivateData(byte[] src, int srcOffset, int length) {
        checkLength(length);
        MemorySegment.copy(src, srcOffset, mad, Be.BYTE, privateDataOffset(), length);
        mad.asSlice(privateDataOffset() + length, privateDataLength() - length).fill((byte) 0);
    }

    private void checkLength(int length) {
        if (length < 0 || length > privateDataLength()) {
            throw new IllegalArgumentException("private data of " + getClass().getSimpleName() + " holds at most "
                    + privateDataLength() + " bytes, got " + length);
        }
    }

    /**
     * {@return the unsigned byte at {@code at}}
     *
     * @param at offset in the MAD
     */
    protected final int u8(int at) {
        return mad.get(Be.BYTE, at) & 0xFF;
    }

    /**
     * Sets the byte at {@code at}.
     *
     * @param at offset
     * @param v value
     */
    protected final void u8(int at, int v) {
        mad.set(Be.BYTE, at, (byte) v);
    }

    /**
     * {@return the unsigned 16 bits at {@code at}}
     *
     * @param at offset in the MAD
     */
    protected final int u16(int at) {
        return mad.get(Be.SHORT, at) & 0xFFFF;
    }

    /**
     * Sets 16 bits at {@code at}.
     *
     * @param at offset
     * @param v value
     */
    protected final void u16(int at, int v) {
        mad.set(Be.SHORT, at, (short) v);
    }

    /**
     * {@return the 32 bits at {@code at}}
     *
     * @param at offset in the MAD
     */
    protected final int u32(int at) {
        return mad.get(Be.INT, at);
    }

    /**
     * Sets 32 bits at {@code at}.
     *
     * @param at offset
     * @param v value
     */
    protected final void u32(int at, int v) {
        mad.set(Be.INT, at, v);
    }

    /**
     * {@return the 64 bits at {@code at}}
     *
     * @param at offset in the MAD
     */
    protected final long u64(int at) {
        return mad.get(Be.LONG, at);
    }

    /**
     * Sets 64 bits at {@code at}.
     *
     * @param at offset
     * @param v value
     */
    protected final void u64(int at, long v) {
        mad.set(Be.LONG, at, v);
    }

    /**
     * {@return the 24 bits starting at byte {@code at}}
     *
     * @param at offset of the most significant byte
     */
    protected final int u24(int at) {
        return mad.get(Be.INT, at) >>> 8;
    }

    /**
     * Sets the 24 bits starting at {@code at}, keeping the byte after them.
     *
     * @param at offset
     * @param v value
     */
    protected final void u24(int at, int v) {
        mad.set(Be.INT, at, (v & Be.U24) << 8 | mad.get(Be.BYTE, at + 3) & 0xFF);
    }

    /**
     * {@return bits {@code [shift + width - 1 : shift]} of the byte at {@code at}}
     *
     * @param at offset
     * @param shift lowest bit (0 = least significant)
     * @param width how many bits
     */
    protected final int bits(int at, int shift, int width) {
        return (mad.get(Be.BYTE, at) & 0xFF) >>> shift & (1 << width) - 1;
    }

    /**
     * Sets bits {@code [shift + width - 1 : shift]} of the byte at {@code at}, keeping the others.
     *
     * @param at offset
     * @param shift lowest bit
     * @param width how many bits
     * @param v the value; bits above {@code width} are ignored
     */
    protected final void bits(int at, int shift, int width, int v) {
        int m = ((1 << width) - 1) << shift;
        int b = mad.get(Be.BYTE, at) & 0xFF;
        mad.set(Be.BYTE, at, (byte) (b & ~m | v << shift & m));
    }

    /**
     * Copies 16 GID bytes at {@code at} into {@code dst}.
     *
     * @param at offset
     * @param dst 16 bytes
     */
    protected final void gid(int at, byte[] dst) {
        MemorySegment.copy(mad, Be.BYTE, at, dst, 0, 16);
    }

    /**
     * Writes 16 GID bytes at {@code at}.
     *
     * @param at offset
     * @param src 16 bytes
     */
    protected final void gidSet(int at, byte[] src) {
        MemorySegment.copy(src, 0, mad, Be.BYTE, at, 16);
    }
}
