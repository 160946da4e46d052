// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

/**
 * ConnectReject (REJ, 0x0012).
 *
 * <pre>
 *  24 Local Communication ID   28 Remote Communication ID
 *  32 Message REJected[7:6] (0 REQ, 1 REP, 2 other)
 *  33 Reject Info Length[7:1]
 *  34 Reason (16)
 *  36 Additional Reject Information (72 bytes)
 * 108 PrivateData (148 bytes)
 * </pre>
 */
public final class CmRej extends CommIdMessage<CmRej> {
    /** Creates an unwrapped REJ flyweight; {@link #wrap} it around a MAD before use. */
    public CmRej() {
    }

    /** Offset of the byte with the message rejected. */
    public static final int MESSAGE_REJECTED_OFFSET = 32;
    /** Offset of the byte with the reject info length. */
    public static final int REJECT_INFO_LENGTH_OFFSET = 33;
    /** Offset of the 16-bit reason. */
    public static final int REASON_OFFSET = 34;
    /** Offset of the additional reject information. */
    public static final int ARI_OFFSET = 36;
    /** Bytes of additional reject information. */
    public static final int ARI_LENGTH = 72;
    /** Offset of the private data. */
    public static final int PRIVATE_DATA_OFFSET = 108;
    /** Bytes of private data. */
    public static final int PRIVATE_DATA_LENGTH = 148;

    /** The REQ is rejected. */
    public static final int MSG_REQ = 0;
    /** The REP is rejected. */
    public static final int MSG_REP = 1;
    /** Another message (or none). */
    public static final int MSG_OTHER = 2;

    /** Reason 1 ({@code IB_CM_REJ_NO_QP}): the receiver has no QP for the connection. */
    public static final int REASON_NO_QP = 1;
    /**
     * Reason 4 ({@code IB_CM_REJ_TIMEOUT}, IBTA vol. 1 table 112): the sender timed out waiting (ARI: its CA
     * GUID).
     */
    public static final int REASON_TIMEOUT = 4;
    /** Reason 8: no one listens on the service id. */
    public static final int REASON_INVALID_SERVICE_ID = 8;
    /** Reason 10: the connection is stale (the comm id is in time wait). */
    public static final int REASON_STALE_CONN = 10;
    /** Reason 28: the consumer rejected (rdma_reject, a full backlog). */
    public static final int REASON_CONSUMER_DEFINED = 28;
    /** Reason 31: invalid class version. */
    public static final int REASON_INVALID_CLASS_VERSION = 31;

    @Override
    public int attributeId() {
        return MadHeader.ATTR_REJ;
    }

    @Override
    public int privateDataOffset() {
        return PRIVATE_DATA_OFFSET;
    }

    /** {@return which message is rejected (2 bits) (the Message Rejected field)} */
    public int messageRejected() { return bits(MESSAGE_REJECTED_OFFSET, 6, 2); }
    /**
     * Sets the Message Rejected field.
     *
     * @param v which message is rejected
     * @return this
     */
    public CmRej messageRejected(int v) { bits(MESSAGE_REJECTED_OFFSET, 6, 2, v); return this; }
    /** {@return the Reject Info Length field (7 bits)} */
    public int rejectInfoLength() { return bits(REJECT_INFO_LENGTH_OFFSET, 1, 7); }
    /**
     * Sets the Reject Info Length field.
     *
     * @param v the reject info length (7 bits; at most 72 is valid)
     * @return this
     */
    public CmRej rejectInfoLength(int v) { bits(REJECT_INFO_LENGTH_OFFSET, 1, 7, v); return this; }
    /** {@return the Reason field} */
    public int reason() { return u16(REASON_OFFSET); }
    /**
     * Sets the Reason field.
     *
     * @param v the reason
     * @return this
     */
    public CmRej reason(int v) { u16(REASON_OFFSET, v); return this; }

    /**
     * Writes the additional reject information and its length.
     *
     * @param ari the bytes
     * @param length how many (at most 72)
     * @return this
     */
    public CmRej ari(byte[] ari, int length) {
        if (length < 0 || length > ARI_LENGTH) {
            throw new IllegalArgumentException("ARI holds at most 72 bytes, got " + length);
        }
        java.lang.foreign.MemorySegment.copy(ari, 0, mad, Be.BYTE, ARI_OFFSET, length);
        rejectInfoLength(length);
        return this;
    }

    /**
     * Copies the additional reject information (its length: {@link #rejectInfoLength()}).
     *
     * @param dst at least 72 bytes
     */
    public void ari(byte[] dst) {
        java.lang.foreign.MemorySegment.copy(mad, Be.BYTE, ARI_OFFSET, dst, 0, ARI_LENGTH);
    }
}
