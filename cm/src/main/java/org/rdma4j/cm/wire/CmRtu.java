// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

/**
 * ReadyToUse (RTU, 0x0014): 24 Local Communication ID, 28 Remote Communication ID, 32 PrivateData (224).
 */
public final class CmRtu extends CommIdMessage<CmRtu> {
    /** Creates an unwrapped RTU flyweight; {@link #wrap} it around a MAD before use. */
    public CmRtu() {
    }

    /** Offset of the private data. */
    public static final int PRIVATE_DATA_OFFSET = 32;
    /** Bytes of private data. */
    public static final int PRIVATE_DATA_LENGTH = 224;

    @Override
    public int attributeId() {
        return MadHeader.ATTR_RTU;
    }

    @Override
    public int privateDataOffset() {
        return PRIVATE_DATA_OFFSET;
    }
}
