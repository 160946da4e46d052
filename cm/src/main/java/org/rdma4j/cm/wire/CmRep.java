// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

/**
 * ConnectReply (REP, attribute 0x0013).
 *
 * <pre>
 *  24 Local Communication ID (32)   28 Remote Communication ID (32)
 *  32 Local Q_Key (32)
 *  36 Local QPN (24)     | 39 reserved
 *  40 Local EE Context Number (24) | 43 reserved
 *  44 Starting PSN (24)  | 47 reserved
 *  48 Responder Resources (8)  49 Initiator Depth (8)
 *  50 Target ACK Delay[7:3] Failover Accepted[2:1] E2E Flow Control[0]
 *  51 RNR Retry Count[7:5] SRQ[4] reserved[3:0]
 *  52 Local CA GUID (64)
 *  60 PrivateData (196 bytes)
 * </pre>
 */
public final class CmRep extends CmMessage {
    /** Creates an unwrapped REP flyweight; {@link #wrap} it around a MAD before use. */
    public CmRep() {
    }

    /** Offset of the local communication id. */
    public static final int LOCAL_COMM_ID_OFFSET = 24;
    /** Offset of the remote communication id. */
    public static final int REMOTE_COMM_ID_OFFSET = 28;
    /** Offset of the local Q_Key. */
    public static final int LOCAL_QKEY_OFFSET = 32;
    /** Offset of the 24-bit local QPN. */
    public static final int LOCAL_QPN_OFFSET = 36;
    /** Offset of the 24-bit local EECN. */
    public static final int LOCAL_EECN_OFFSET = 40;
    /** Offset of the 24-bit starting PSN. */
    public static final int STARTING_PSN_OFFSET = 44;
    /** Offset of the responder resources. */
    public static final int RESPONDER_RESOURCES_OFFSET = 48;
    /** Offset of the initiator depth. */
    public static final int INITIATOR_DEPTH_OFFSET = 49;
    /** Offset of the byte with target ACK delay, failover accepted and flow control. */
    public static final int OFFSET50 = 50;
    /** Offset of the byte with RNR retry count and SRQ. */
    public static final int OFFSET51 = 51;
    /** Offset of the local CA GUID. */
    public static final int LOCAL_CA_GUID_OFFSET = 52;
    /** Offset of the private data. */
    public static final int PRIVATE_DATA_OFFSET = 60;
    /** Bytes of private data. */
    public static final int PRIVATE_DATA_LENGTH = 196;

    @Override
    public int attributeId() {
        return MadHeader.ATTR_REP;
    }

    @Override
    public int privateDataOffset() {
        return PRIVATE_DATA_OFFSET;
    }

    @Override
    public CmRep wrap(java.lang.foreign.MemorySegment segment) {
        super.wrap(segment);
        return this;
    }

    /** {@return the Local Communication ID field} */
    public int localCommId() { return u32(LOCAL_COMM_ID_OFFSET); }
    /**
     * Sets the Local Communication ID field.
     *
     * @param v the local communication id
     * @return this
     */
    public CmRep localCommId(int v) { u32(LOCAL_COMM_ID_OFFSET, v); return this; }
    /** {@return the Remote Communication ID field} */
    public int remoteCommId() { return u32(REMOTE_COMM_ID_OFFSET); }
    /**
     * Sets the Remote Communication ID field.
     *
     * @param v the remote communication id
     * @return this
     */
    public CmRep remoteCommId(int v) { u32(REMOTE_COMM_ID_OFFSET, v); return this; }
    /** {@return the Local Q_Key field} */
    public int localQkey() { return u32(LOCAL_QKEY_OFFSET); }
    /**
     * Sets the Local Q_Key field.
     *
     * @param v the local Q_Key
     * @return this
     */
    public CmRep localQkey(int v) { u32(LOCAL_QKEY_OFFSET, v); return this; }
    /** {@return the Local QPN field} */
    public int localQpn() { return u24(LOCAL_QPN_OFFSET); }
    /**
     * Sets the Local QPN field.
     *
     * @param v the local QPN (24 bits)
     * @return this
     */
    public CmRep localQpn(int v) { u24(LOCAL_QPN_OFFSET, v); return this; }
    /** {@return the Local EECN field} */
    public int localEecn() { return u24(LOCAL_EECN_OFFSET); }
    /** {@return the Starting PSN field} */
    public int startingPsn() { return u24(STARTING_PSN_OFFSET); }
    /**
     * Sets the Starting PSN field.
     *
     * @param v the starting PSN (24 bits)
     * @return this
     */
    public CmRep startingPsn(int v) { u24(STARTING_PSN_OFFSET, v); return this; }
    /** {@return the Responder Resources field} */
    public int responderResources() { return u8(RESPONDER_RESOURCES_OFFSET); }
    /**
     * Sets the Responder Resources field.
     *
     * @param v the responder resources
     * @return this
     */
    public CmRep responderResources(int v) { u8(RESPONDER_RESOURCES_OFFSET, v); return this; }
    /** {@return the Initiator Depth field} */
    public int initiatorDepth() { return u8(INITIATOR_DEPTH_OFFSET); }
    /**
     * Sets the Initiator Depth field.
     *
     * @param v the initiator depth
     * @return this
     */
    public CmRep initiatorDepth(int v) { u8(INITIATOR_DEPTH_OFFSET, v); return this; }
    /** {@return the Target ACK Delay field (5 bits)} */
    public int targetAckDelay() { return bits(OFFSET50, 3, 5); }
    /**
     * Sets the Target ACK Delay field.
     *
     * @param v the target ACK delay (5 bits)
     * @return this
     */
    public CmRep targetAckDelay(int v) { bits(OFFSET50, 3, 5, v); return this; }
    /** {@return failover accepted (2 bits) (the Failover Accepted field)} */
    public int failoverAccepted() { return bits(OFFSET50, 1, 2); }
    /**
     * Sets the Failover Accepted field.
     *
     * @param v failover accepted (2 bits)
     * @return this
     */
    public CmRep failoverAccepted(int v) { bits(OFFSET50, 1, 2, v); return this; }
    /** {@return the end-to-end flow control bit (the Flow Control field)} */
    public boolean flowControl() { return bits(OFFSET50, 0, 1) != 0; }
    /**
     * Sets the Flow Control field.
     *
     * @param v end-to-end flow control
     * @return this
     */
    public CmRep flowControl(boolean v) { bits(OFFSET50, 0, 1, v ? 1 : 0); return this; }
    /** {@return the RNR Retry Count field (3 bits)} */
    public int rnrRetryCount() { return bits(OFFSET51, 5, 3); }
    /**
     * Sets the RNR Retry Count field.
     *
     * @param v the RNR retry count (3 bits)
     * @return this
     */
    public CmRep rnrRetryCount(int v) { bits(OFFSET51, 5, 3, v); return this; }
    /** {@return the SRQ field} */
    public boolean srq() { return bits(OFFSET51, 4, 1) != 0; }
    /**
     * Sets the SRQ field.
     *
     * @param v whether the sender uses an SRQ
     * @return this
     */
    public CmRep srq(boolean v) { bits(OFFSET51, 4, 1, v ? 1 : 0); return this; }
    /** {@return the Local CA GUID field} */
    public long localCaGuid() { return u64(LOCAL_CA_GUID_OFFSET); }
    /**
     * Sets the Local CA GUID field.
     *
     * @param v the local CA GUID
     * @return this
     */
    public CmRep localCaGuid(long v) { u64(LOCAL_CA_GUID_OFFSET, v); return this; }
}
