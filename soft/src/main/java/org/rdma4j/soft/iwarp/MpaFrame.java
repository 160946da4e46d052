// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.wire.BigEndian.BYTE;
import static org.rdma4j.soft.wire.BigEndian.SHORT;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The MPA request, reply and reject frames that open an iWARP connection (RFC 5044 section 7.1,
 * enhanced by RFC 6581 section 3; siw's {@code struct mpa_rr} and {@code struct mpa_v2_data}), and a
 * decoder that takes whatever part of the frame TCP has delivered.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |  Key: "MPA ID Req Frame" (request) or "MPA ID Rep Frame"       |  0..15
 *  |  (reply or reject), 16 ASCII bytes                             |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |M|C|R|E|G| Res | Revision      |   Private data length         | 16
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |P|Z|  IRD (enhanced only)      |W|R|  ORD (enhanced only)      | 20
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |  private data of the ULP ...                                  |
 * </pre>
 *
 * <p>M markers, C CRC, R reject, E enhanced connection setup (RFC 6581), G siw's private "GSO allowed"
 * hint ({@code MPA_RR_FLAG_GSO_EXP}, outside the RFCs; carried, never required). The private data
 * length counts the IRD/ORD words when E is set with revision 2; siw receives at most 256 bytes in all
 * and so lets the ULP send at most 252 in an enhanced frame. In the IRD word P asks for peer-to-peer
 * mode and Z offers a zero-length Send as the ready-to-receive (RTR) message; in the ORD word W and R
 * offer a zero-length RDMA Write or Read as the RTR; the low 14 bits are the value.
 *
 * <p>Decoding checks, as soon as the 20-byte header is there: the key, the revision (1 or 2; siw also
 * tolerates 0), the private data length against 256, the M flag (refused, as siw refuses it) and that an
 * enhanced frame has room for IRD/ORD; then it waits for the private data. Encoding is for the control
 * path and throws on bad arguments. Not thread safe; one decoder per connection.
 */
public final class MpaFrame {
    /** Length of the key. */
    public static final int KEY_LENGTH = 16;
    /** Offset of the flags byte. */
    public static final int FLAGS_OFFSET = 16;
    /** Offset of the revision byte. */
    public static final int REVISION_OFFSET = 17;
    /** Offset of the 16-bit private data length. */
    public static final int PRIVATE_DATA_LENGTH_OFFSET = 18;
    /** Length of the frame header; the private data follows. */
    public static final int HEADER_LENGTH = 20;

    /** Flag M: markers requested (siw {@code MPA_RR_FLAG_MARKERS}). */
    public static final int FLAG_MARKERS = 0x80;
    /** Flag C: CRC requested; once either side sets it both use it (siw {@code MPA_RR_FLAG_CRC}). */
    public static final int FLAG_CRC = 0x40;
    /** Flag R: the reply rejects the connection (siw {@code MPA_RR_FLAG_REJECT}). */
    public static final int FLAG_REJECT = 0x20;
    /** Flag E: enhanced connection setup, IRD/ORD in the private data (siw {@code MPA_RR_FLAG_ENHANCED}). */
    public static final int FLAG_ENHANCED = 0x10;
    /** siw's private flag allowing several FPDUs per TCP segment (siw {@code MPA_RR_FLAG_GSO_EXP}). */
    public static final int FLAG_SIW_GSO = 0x08;
    /** The reserved flag bits, sent as zero. */
    public static final int FLAGS_RESERVED = 0x07;

    /** Revision 1, RFC 5044 (siw {@code MPA_REVISION_1}). */
    public static final int REVISION_1 = 1;
    /** Revision 2, RFC 6581 enhanced setup (siw {@code MPA_REVISION_2}, its default). */
    public static final int REVISION_2 = 2;
    /** The most private data siw accepts on the wire, IRD/ORD included (siw {@code MPA_MAX_PRIVDATA}). */
    public static final int MAX_PRIVATE_DATA = 256;
    /** Length of the IRD and ORD words at the start of an enhanced frame's private data. */
    public static final int IRD_ORD_LENGTH = 4;
    /** The value bits of the IRD and ORD words (siw {@code MPA_IRD_ORD_MASK}). */
    public static final int IRD_ORD_MASK = 0x3FFF;
    /** IRD word: peer-to-peer mode, an RTR message opens the stream (siw {@code MPA_V2_PEER_TO_PEER}). */
    public static final int IRD_PEER_TO_PEER = 0x8000;
    /** IRD word: a zero-length Send may be the RTR (siw {@code MPA_V2_ZERO_LENGTH_RTR}). */
    public static final int IRD_ZERO_LENGTH_SEND_RTR = 0x4000;
    /** ORD word: a zero-length RDMA Write may be the RTR (siw {@code MPA_V2_RDMA_WRITE_RTR}). */
    public static final int ORD_WRITE_RTR = 0x8000;
    /** ORD word: a zero-length RDMA Read may be the RTR (siw {@code MPA_V2_RDMA_READ_RTR}). */
    public static final int ORD_READ_RTR = 0x4000;

    private static final byte[] REQUEST_KEY = "MPA ID Req Frame".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] REPLY_KEY = "MPA ID Rep Frame".getBytes(StandardCharsets.US_ASCII);

    private int flags;
    private int revision;
    private int privateDataLength;
    private long privateDataOffset;
    private int frameLength;
    private int missingBytes;
    private int irdWord;
    private int ordWord;

    /** Creates a decoder holding no frame. */
    public MpaFrame() {
    }

    /**
     * Decodes the frame at the start of {@code available} bytes.
     *
     * @param s           the segment
     * @param offset      where the frame starts
     * @param available   how many bytes of the stream are there from {@code offset}
     * @param expectReply true for the initiator (reply key), false for the responder (request key)
     * @param streamEnded whether the peer has closed, so no more bytes will come
     * @return {@link MpaStatus#COMPLETE} with the fields set and {@link #frameLength()} the bytes to
     *         consume (any bytes after them are not the frame's), {@link MpaStatus#NEED_MORE} with
     *         {@link #missingBytes()}, or the peer's error; the header fields are set for any status
     *         after the key was found right
     * @throws IndexOutOfBoundsException if the range is not inside {@code s}
     */
    public MpaStatus decode(MemorySegment s, long offset, long available, boolean expectReply, boolean streamEnded) {
        Objects.checkFromIndexSize(offset, available, s.byteSize());
        clear();
        byte[] key = expectReply ? REPLY_KEY : REQUEST_KEY;
        int keyBytes = (int) Math.min(available, KEY_LENGTH);
        for (int i = 0; i < keyBytes; i++) {
            if (s.get(BYTE, offset + i) != key[i]) {
                return MpaStatus.WRONG_KEY;
            }
        }
        if (available < HEADER_LENGTH) {
            return incomplete(HEADER_LENGTH - available, streamEnded);
        }
        flags = Byte.toUnsignedInt(s.get(BYTE, offset + FLAGS_OFFSET));
        revision = Byte.toUnsignedInt(s.get(BYTE, offset + REVISION_OFFSET));
        privateDataLength = Short.toUnsignedInt(s.get(SHORT, offset + PRIVATE_DATA_LENGTH_OFFSET));
        privateDataOffset = offset + HEADER_LENGTH;
        if (revision != REVISION_1 && revision != REVISION_2) {
            return MpaStatus.BAD_REVISION;
        }
        if (privateDataLength > MAX_PRIVATE_DATA) {
            return MpaStatus.PRIVATE_DATA_TOO_LONG;
        }
        if ((flags & FLAG_MARKERS) != 0) {
            return MpaStatus.MARKERS_REQUESTED;
        }
        if (enhanced() && privateDataLength < IRD_ORD_LENGTH) {
            return MpaStatus.ENHANCED_WITHOUT_IRD_ORD;
        }
        if (available < HEADER_LENGTH + privateDataLength) {
            return incomplete(HEADER_LENGTH + privateDataLength - available, streamEnded);
        }
        if (enhanced()) {
            irdWord = Short.toUnsignedInt(s.get(SHORT, privateDataOffset));
            ordWord = Short.toUnsignedInt(s.get(SHORT, privateDataOffset + 2));
        }
        frameLength = HEADER_LENGTH + privateDataLength;
        return MpaStatus.COMPLETE;
    }

    /**
     * Decodes the frame between the buffer's position and limit; offsets such as
     * {@link #ulpPrivateDataOffset()} then count from the position. The position does not move.
     *
     * @param b           the buffer
     * @param expectReply true for the initiator, false for the responder
     * @param streamEnded whether the peer has closed
     * @return as {@link #decode(MemorySegment, long, long, boolean, boolean)}
     */
    public MpaStatus decode(ByteBuffer b, boolean expectReply, boolean streamEnded) {
        MemorySegment s = MemorySegment.ofBuffer(b);
        return decode(s, 0, s.byteSize(), expectReply, streamEnded);
    }

    private MpaStatus incomplete(long missing, boolean streamEnded) {
        missingBytes = (int) missing;
        return streamEnded ? MpaStatus.TRUNCATED : MpaStatus.NEED_MORE;
    }

    private void clear() {
        flags = 0;
        revision = 0;
        privateDataLength = 0;
        privateDataOffset = 0;
        frameLength = 0;
        missingBytes = 0;
        irdWord = 0;
        ordWord = 0;
    }

    /** {@return the flags byte} */
    public int flags() {
        return flags;
    }

    /** {@return the revision} */
    public int revision() {
        return revision;
    }

    /** {@return whether the peer asks for CRC} */
    public boolean crc() {
        return (flags & FLAG_CRC) != 0;
    }

    /** {@return whether this reply rejects the connection} */
    public boolean reject() {
        return (flags & FLAG_REJECT) != 0;
    }

    /** {@return whether the frame is enhanced: revision 2 with E set, IRD and ORD present} */
    public boolean enhanced() {
        return revision == REVISION_2 && (flags & FLAG_ENHANCED) != 0;
    }

    /** {@return the private data length on the wire, IRD/ORD words included} */
    public int privateDataLength() {
        return privateDataLength;
    }

    /** {@return where the ULP's private data starts, after the IRD/ORD words of an enhanced frame} */
    public long ulpPrivateDataOffset() {
        return privateDataOffset + (enhanced() ? IRD_ORD_LENGTH : 0);
    }

    /** {@return the length of the ULP's private data, IRD/ORD words excluded} */
    public int ulpPrivateDataLength() {
        return privateDataLength - (enhanced() ? IRD_ORD_LENGTH : 0);
    }

    /** {@return the bytes of the complete frame} */
    public int frameLength() {
        return frameLength;
    }

    /** {@return after {@link MpaStatus#NEED_MORE} or TRUNCATED, how many more bytes the next step needs} */
    public int missingBytes() {
        return missingBytes;
    }

    /** {@return the raw IRD word of an enhanced frame (value and P, Z bits), 0 otherwise} */
    public int irdWord() {
        return irdWord;
    }

    /** {@return the raw ORD word of an enhanced frame (value and W, R bits), 0 otherwise} */
    public int ordWord() {
        return ordWord;
    }

    /** {@return the IRD value, 0 to 16383} */
    public int ird() {
        return irdWord & IRD_ORD_MASK;
    }

    /** {@return the ORD value, 0 to 16383} */
    public int ord() {
        return ordWord & IRD_ORD_MASK;
    }

    /**
     * {@return the most ULP private data a frame can carry: 256, or 252 when enhanced}
     *
     * @param enhanced whether the frame carries IRD/ORD
     */
    public static int maxUlpPrivateData(boolean enhanced) {
        return MAX_PRIVATE_DATA - (enhanced ? IRD_ORD_LENGTH : 0);
    }

    /**
     * Writes a frame. With {@link #FLAG_ENHANCED} and revision 2 the IRD and ORD words go first and the
     * private data length counts them.
     *
     * @param s            the segment
     * @param offset       where the frame goes
     * @param reply        true for a reply or reject (reply key), false for a request
     * @param flags        the flags byte; the reserved bits must be clear
     * @param revision     1 or 2
     * @param irdWord      the IRD word of an enhanced frame (value | P | Z), ignored otherwise
     * @param ordWord      the ORD word of an enhanced frame (value | W | R), ignored otherwise
     * @param privateData  the ULP's private data
     * @param dataOffset   where it starts
     * @param dataLength   its length, at most {@link #maxUlpPrivateData}
     * @return the frame length
     * @throws IllegalArgumentException if a value does not fit its field or the frame does not fit in {@code s}
     */
    public static int encode(MemorySegment s, long offset, boolean reply, int flags, int revision, int irdWord,
                             int ordWord, MemorySegment privateData, long dataOffset, int dataLength) {
        if (revision != REVISION_1 && revision != REVISION_2) {
            throw new IllegalArgumentException("MPA revision " + revision + ": must be 1 or 2");
        }
        if ((flags & ~0xFF) != 0 || (flags & FLAGS_RESERVED) != 0) {
            throw new IllegalArgumentException("MPA flags 0x" + Integer.toHexString(flags) + ": reserved bits set");
        }
        if ((flags & FLAG_ENHANCED) != 0 && revision != REVISION_2) {
            throw new IllegalArgumentException("an enhanced MPA frame needs revision 2, not " + revision);
        }
        boolean enhanced = (flags & FLAG_ENHANCED) != 0;
        if ((irdWord & ~0xFFFF) != 0 || (ordWord & ~0xFFFF) != 0) {
            throw new IllegalArgumentException("MPA IRD/ORD words are 16 bits: 0x" + Integer.toHexString(irdWord)
                    + ", 0x" + Integer.toHexString(ordWord));
        }
        if (dataLength < 0 || dataLength > maxUlpPrivateData(enhanced)) {
            throw new IllegalArgumentException("MPA private data of " + dataLength + " bytes: at most "
                    + maxUlpPrivateData(enhanced) + (enhanced ? " in an enhanced frame" : ""));
        }
        int wireData = dataLength + (enhanced ? IRD_ORD_LENGTH : 0);
        int length = HEADER_LENGTH + wireData;
        if (offset < 0 || offset > s.byteSize() - length) {
            throw new IllegalArgumentException("an MPA frame of " + length + " bytes does not fit at " + offset
                    + " in " + s.byteSize() + " bytes");
        }
        MemorySegment.copy(reply ? REPLY_KEY : REQUEST_KEY, 0, s, BYTE, offset, KEY_LENGTH);
        s.set(BYTE, offset + FLAGS_OFFSET, (byte) flags);
        s.set(BYTE, offset + REVISION_OFFSET, (byte) revision);
        s.set(SHORT, offset + PRIVATE_DATA_LENGTH_OFFSET, (short) wireData);
        long at = offset + HEADER_LENGTH;
        if (enhanced) {
            s.set(SHORT, at, (short) irdWord);
            s.set(SHORT, at + 2, (short) ordWord);
            at += IRD_ORD_LENGTH;
        }
        if (dataLength > 0) {
            MemorySegment.copy(privateData, dataOffset, s, at, dataLength);
        }
        return length;
    }

    /**
     * Writes a frame at the buffer's position and moves the position past it.
     *
     * @param b           the buffer
     * @param reply       true for a reply or reject
     * @param flags       the flags byte
     * @param revision    1 or 2
     * @param irdWord     the IRD word of an enhanced frame
     * @param ordWord     the ORD word of an enhanced frame
     * @param privateData the ULP's private data (all of it)
     * @return the frame length
     * @throws IllegalArgumentException as {@link #encode(MemorySegment, long, boolean, int, int, int, int, MemorySegment, long, int)}
     */
    public static int encode(ByteBuffer b, boolean reply, int flags, int revision, int irdWord, int ordWord,
                             byte[] privateData) {
        MemorySegment s = MemorySegment.ofBuffer(b);
        int length = encode(s, 0, reply, flags, revision, irdWord, ordWord, MemorySegment.ofArray(privateData), 0,
                privateData.length);
        b.position(b.position() + length);
        return length;
    }
}
