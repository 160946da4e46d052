// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

/**
 * MessageReceiptAcknowledgement (MRA, 0x0011): "your message arrived, the answer takes longer".
 *
 * <pre>
 *  24 Local Communication ID   28 Remote Communication ID
 *  32 Message MRAed[7:6] (0 REQ, 1 REP, 2 LAP)
 *  33 Service Timeout[7:3]
 *  34 PrivateData (222 bytes)
 * </pre>
 */
public final class CmMra extends CommIdMessage<CmMra> {
    /** Creates an unwrapped MRA flyweight; {@link #wrap} it around a MAD before use. */
    public CmMra() {
    }

    /** Offset of the byte with the message MRAed. */
    public static final int MESSAGE_MRAED_OFFSET = 32;
    /** Offset of the byte with the service timeout. */
    public static final int SERVICE_TIMEOUT_OFFSET = 33;
    /** Offset of the private data. */
    public static final int PRIVATE_DATA_OFFSET = 34;
    /** Bytes of private data. */
    public static final int PRIVATE_DATA_LENGTH = 222;
    /** A REQ was MRAed (also the value in REJ's message-rejected field). */
    public static final int MSG_REQ = 0;
    /** A REP was MRAed. */
    public static final int MSG_REP = 1;
    /** Another message (LAP). */
    public static final int MSG_OTHER = 2;

    @Override
    public int attributeId() {
        return MadHeader.ATTR_MRA;
    }

    @Override
    public int privateDataOffset() {
        return PRIVATE_DATA_OFFSET;
    }

    /** {@return which message is acknowledged (2 bits) (the Message Mraed field)} */
    public int messageMraed() { return bits(MESSAGE_MRAED_OFFSET, 6, 2); }
    /**
     * Sets the Message Mraed field.
     *
     * @param v which message is acknowledged
     * @return this
     */
    public CmMra messageMraed(int v) { bits(MESSAGE_MRAED_OFFSET, 6, 2, v); return this; }
    /** {@return the Service Timeout field (5 bits, 4.096 us * 2^t)} */
    public int serviceTimeout() { return bits(SERVICE_TIMEOUT_OFFSET, 3, 5); }
    /**
     * Sets the Service Timeout field.
     *
     * @param v the service timeout (5 bits)
     * @return this
     */
    public CmMra serviceTimeout(int v) { bits(SERVICE_TIMEOUT_OFFSET, 3, 5, v); return this; }
}
