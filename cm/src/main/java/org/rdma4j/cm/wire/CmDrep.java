// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

/** DisconnectReply (DREP, 0x0016): 24 Local Communication ID, 28 Remote Communication ID, 32 PrivateData (224). */
public final class CmDrep extends CommIdMessage<CmDrep> {
    /** Creates an unwrapped DREP flyweight; {@link #wrap} it around a MAD before use. */
    public CmDrep() {
    }

    /** Offset of the private data. */
    public static final int PRIVATE_DATA_OFFSET = 32;
    /** Bytes of private data. */
    public static final int PRIVATE_DATA_LENGTH = 224;

    @Override
    public int attributeId() {
        return MadHeader.ATTR_DREP;
    }

    @Override
    public int privateDataOffset() {
        return PRIVATE_DATA_OFFSET;
    }
}
