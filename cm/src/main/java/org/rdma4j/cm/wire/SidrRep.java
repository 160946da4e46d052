// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

import java.lang.foreign.MemorySegment;

/**
 * ServiceIDResolutionResponse (SIDR_REP, 0x0018): 24 Request ID (32), 28 Status (8), 29 Additional
 * Information Length (8), 30 reserved, 32 QPN (24) | 35 reserved, 36 ServiceID (64), 44 Q_Key (32),
 * 48 Additional Information (72), 120 PrivateData (136).
 */
public final class SidrRep extends CmMessage {
    /** Creates an unwrapped SIDR_REP flyweight; {@link #wrap} it around a MAD before use. */
    public SidrRep() {
    }

    /** Offset of the request id. */
    public static final int REQUEST_ID_OFFSET = 24;
    /** Offset of the status. */
    public static final int STATUS_OFFSET = 28;
    /** Offset of the additional information length. */
    public static final int INFO_LENGTH_OFFSET = 29;
    /** Offset of the 24-bit QPN. */
    public static final int QPN_OFFSET = 32;
    /** Offset of the service id. */
    public static final int SERVICE_ID_OFFSET = 36;
    /** Offset of the Q_Key. */
    public static final int QKEY_OFFSET = 44;
    /** Offset of the additional information. */
    public static final int INFO_OFFSET = 48;
    /** Offset of the private data. */
    public static final int PRIVATE_DATA_OFFSET = 120;
    /** Bytes of private data. */
    public static final int PRIVATE_DATA_LENGTH = 136;
    /** Status 0: the QP is valid. */
    public static final int STATUS_SUCCESS = 0;
    /** Status 1: no one serves the service id. */
    public static final int STATUS_UNSUPPORTED = 1;
    /** Status 2: the consumer rejected. */
    public static final int STATUS_REJECT = 2;

    @Override
    public int attributeId() {
        return MadHeader.ATTR_SIDR_REP;
    }

    @Override
    public int privateDataOffset() {
        return PRIVATE_DATA_OFFSET;
    }

    @Override
    public SidrRep wrap(MemorySegment segment) {
        super.wrap(segment);
        return this;
    }

    /** {@return the Request ID field} */
    public int requestId() { return u32(REQUEST_ID_OFFSET); }
    /**
     * Sets the Request ID field.
     *
     * @param v the request id
     * @return this
     */
    public SidrRep requestId(int v) { u32(REQUEST_ID_OFFSET, v); return this; }
    /** {@return the Status field} */
    public int status() { return u8(STATUS_OFFSET); }
    /**
     * Sets the Status field.
     *
     * @param v the status
     * @return this
     */
    public SidrRep status(int v) { u8(STATUS_OFFSET, v); return this; }
    /** {@return the additional information length (the Info Length field)} */
    public int infoLength() { return u8(INFO_LENGTH_OFFSET); }
    /** {@return the QPN field} */
    public int qpn() { return u24(QPN_OFFSET); }
    /**
     * Sets the QPN field.
     *
     * @param v the QPN (24 bits)
     * @return this
     */
    public SidrRep qpn(int v) { u24(QPN_OFFSET, v); return this; }
    /** {@return the Service ID field} */
    public long serviceId() { return u64(SERVICE_ID_OFFSET); }
    /**
     * Sets the Service ID field.
     *
     * @param v the service id
     * @return this
     */
    public SidrRep serviceId(long v) { u64(SERVICE_ID_OFFSET, v); return this; }
    /** {@return the Q_Key field} */
    public int qkey() { return u32(QKEY_OFFSET); }
    /**
     * Sets the Q_Key field.
     *
     * @param v the Q_Key
     * @return this
     */
    public SidrRep qkey(int v) { u32(QKEY_OFFSET, v); return this; }
}
