// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

/**
 * DisconnectRequest (DREQ, 0x0015): 24 Local Communication ID, 28 Remote Communication ID,
 * 32 Remote QPN/EECN (24) | 35 reserved, 36 PrivateData (220).
 */
public final class CmDreq extends CommIdMessage<CmDreq> {
    /** Creates an unwrapped DREQ flyweight; {@link #wrap} it around a MAD before use. */
    public CmDreq() {
    }

    /** Offset of the 24-bit remote QPN. */
    public static final int REMOTE_QPN_OFFSET = 32;
    /** Offset of the private data. */
    public static final int PRIVATE_DATA_OFFSET = 36;
    /** Bytes of private data. */
    public static final int PRIVATE_DATA_LENGTH = 220;

    @Override
    public int attributeId() {
        return MadHeader.ATTR_DREQ;
    }

    @Override
    public int privateDataOffset() {
        return PRIVATE_DATA_OFFSET;
    }

    /** {@return the receiver's QPN (the Remote QPN field)} */
    public int remoteQpn() { return u24(REMOTE_QPN_OFFSET); }
    /**
     * Sets the Remote QPN field.
     *
     * @param v the receiver's QPN (24 bits)
     * @return this
     */
    public CmDreq remoteQpn(int v) { u24(REMOTE_QPN_OFFSET, v); return this; }
}
