// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

import java.lang.foreign.MemorySegment;

/**
 * ServiceIDResolutionRequest (SIDR_REQ, 0x0017): 24 Request ID (32), 28 P_Key (16), 30 reserved,
 * 32 ServiceID (64), 40 PrivateData (216).
 */
public final class SidrReq extends CmMessage {
    /** Creates an unwrapped SIDR_REQ flyweight; {@link #wrap} it around a MAD before use. */
    public SidrReq() {
    }

    /** Offset of the request id. */
    public static final int REQUEST_ID_OFFSET = 24;
    /** Offset of the P_Key. */
    public static final int PKEY_OFFSET = 28;
    /** Offset of the service id. */
    public static final int SERVICE_ID_OFFSET = 32;
    /** Offset of the private data. */
    public static final int PRIVATE_DATA_OFFSET = 40;
    /** Bytes of private data. */
    public static final int PRIVATE_DATA_LENGTH = 216;

    @Override
    public int attributeId() {
        return MadHeader.ATTR_SIDR_REQ;
    }

    @Override
    public int privateDataOffset() {
        return PRIVATE_DATA_OFFSET;
    }

    @Override
    public SidrReq wrap(MemorySegment segment) {
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
    public SidrReq requestId(int v) { u32(REQUEST_ID_OFFSET, v); return this; }
    /** {@return the P_Key (the Partition Key field)} */
    public int pkey() { return u16(PKEY_OFFSET); }
    /**
     * Sets the Partition Key field.
     *
     * @param v the P_Key
     * @return this
     */
    public SidrReq pkey(int v) { u16(PKEY_OFFSET, v); return this; }
    /** {@return the Service ID field} */
    public long serviceId() { return u64(SERVICE_ID_OFFSET); }
    /**
     * Sets the Service ID field.
     *
     * @param v the service id
     * @return this
     */
    public SidrReq serviceId(long v) { u64(SERVICE_ID_OFFSET, v); return this; }
}
