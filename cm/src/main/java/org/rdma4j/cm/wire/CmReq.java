// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm.wire;

/**
 * ConnectRequest (REQ, attribute 0x0010). Offsets are in the MAD (24-byte header first).
 *
 * <pre>
 *  24 Local Communication ID (32)           28 reserved (32)
 *  32 ServiceID (64)
 *  40 Local CA GUID (64)
 *  48 reserved (32)                         52 Local Q_Key (32)
 *  56 Local QPN (24)      | 59 Responder Resources (8)
 *  60 Local EECN (24)     | 63 Initiator Depth (8)
 *  64 Remote EECN (24)    | 67 Remote CM Response Timeout[7:3] Transport Service Type[2:1] E2E Flow Ctrl[0]
 *  68 Starting PSN (24)   | 71 Local CM Response Timeout[7:3] Retry Count[2:0]
 *  72 Partition Key (16)  | 74 Path MTU[7:4] RDC Exists[3] RNR Retry Count[2:0]
 *                         | 75 Max CM Retries[7:4] SRQ[3] Extended Transport Type[2:0]
 *  76 Primary Local LID (16)                78 Primary Remote LID (16)
 *  80 Primary Local Port GID (128)
 *  96 Primary Remote Port GID (128)
 * 112 Primary Flow Label[31:12] reserved[11:6] Primary Packet Rate[5:0]
 * 116 Primary Traffic Class (8)  117 Primary Hop Limit (8)
 * 118 Primary SL[7:4] Subnet Local[3]      119 Primary Local ACK Timeout[7:3]
 * 120..163 the alternate path (same shape; zero when there is none)
 * 164 PrivateData (92 bytes)
 * </pre>
 */
public final class CmReq extends CmMessage {
    /** Creates an unwrapped REQ flyweight; {@link #wrap} it around a MAD before use. */
    public CmReq() {
    }

    /** Offset of the local communication id. */
    public static final int LOCAL_COMM_ID_OFFSET = 24;
    /** Offset of the service id. */
    public static final int SERVICE_ID_OFFSET = 32;
    /** Offset of the local CA GUID. */
    public static final int LOCAL_CA_GUID_OFFSET = 40;
    /** Offset of the local Q_Key. */
    public static final int LOCAL_QKEY_OFFSET = 52;
    /** Offset of the 24-bit local QPN. */
    public static final int LOCAL_QPN_OFFSET = 56;
    /** Offset of the responder resources byte. */
    public static final int RESPONDER_RESOURCES_OFFSET = 59;
    /** Offset of the 24-bit local EECN. */
    public static final int LOCAL_EECN_OFFSET = 60;
    /** Offset of the initiator depth byte. */
    public static final int INITIATOR_DEPTH_OFFSET = 63;
    /** Offset of the 24-bit remote EECN. */
    public static final int REMOTE_EECN_OFFSET = 64;
    /** Offset of the byte with remote CM response timeout, transport service type and flow control. */
    public static final int OFFSET67 = 67;
    /** Offset of the 24-bit starting PSN. */
    public static final int STARTING_PSN_OFFSET = 68;
    /** Offset of the byte with local CM response timeout and retry count. */
    public static final int OFFSET71 = 71;
    /** Offset of the P_Key. */
    public static final int PKEY_OFFSET = 72;
    /** Offset of the byte with path MTU, RDC exists and RNR retry count. */
    public static final int OFFSET74 = 74;
    /** Offset of the byte with max CM retries, SRQ and extended transport type. */
    public static final int OFFSET75 = 75;
    /** Offset of the primary local LID. */
    public static final int PRIMARY_LOCAL_LID_OFFSET = 76;
    /** Offset of the primary remote LID. */
    public static final int PRIMARY_REMOTE_LID_OFFSET = 78;
    /** Offset of the primary local port GID. */
    public static final int PRIMARY_LOCAL_GID_OFFSET = 80;
    /** Offset of the primary remote port GID. */
    public static final int PRIMARY_REMOTE_GID_OFFSET = 96;
    /** Offset of the word with flow label and packet rate. */
    public static final int PRIMARY_FLOW_LABEL_OFFSET = 112;
    /** Offset of the primary traffic class. */
    public static final int PRIMARY_TRAFFIC_CLASS_OFFSET = 116;
    /** Offset of the primary hop limit. */
    public static final int PRIMARY_HOP_LIMIT_OFFSET = 117;
    /** Offset of the byte with SL and subnet local. */
    public static final int PRIMARY_SL_OFFSET = 118;
    /** Offset of the byte with the primary local ACK timeout. */
    public static final int PRIMARY_LOCAL_ACK_TIMEOUT_OFFSET = 119;
    /** Offset of the private data. */
    public static final int PRIVATE_DATA_OFFSET = 164;
    /** Bytes of private data. */
    public static final int PRIVATE_DATA_LENGTH = 92;

    /** Transport service type RC. */
    public static final int TRANSPORT_RC = 0;
    /** Transport service type UC. */
    public static final int TRANSPORT_UC = 1;

    @Override
    public int attributeId() {
        return MadHeader.ATTR_REQ;
    }

    @Override
    public int privateDataOffset() {
        return PRIVATE_DATA_OFFSET;
    }

    @Override
    public CmReq wrap(java.lang.foreign.MemorySegment segment) {
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
    public CmReq localCommId(int v) { u32(LOCAL_COMM_ID_OFFSET, v); return this; }
    /** {@return the Service ID field} */
    public long serviceId() { return u64(SERVICE_ID_OFFSET); }
    /**
     * Sets the Service ID field.
     *
     * @param v the service id
     * @return this
     */
    public CmReq serviceId(long v) { u64(SERVICE_ID_OFFSET, v); return this; }
    /** {@return the Local CA GUID field} */
    public long localCaGuid() { return u64(LOCAL_CA_GUID_OFFSET); }
    /**
     * Sets the Local CA GUID field.
     *
     * @param v the local CA GUID
     * @return this
     */
    public CmReq localCaGuid(long v) { u64(LOCAL_CA_GUID_OFFSET, v); return this; }
    /** {@return the Local Q_Key field} */
    public int localQkey() { return u32(LOCAL_QKEY_OFFSET); }
    /**
     * Sets the Local Q_Key field.
     *
     * @param v the local Q_Key
     * @return this
     */
    public CmReq localQkey(int v) { u32(LOCAL_QKEY_OFFSET, v); return this; }
    /** {@return the Local QPN field} */
    public int localQpn() { return u24(LOCAL_QPN_OFFSET); }
    /**
     * Sets the Local QPN field.
     *
     * @param v the local QPN (24 bits)
     * @return this
     */
    public CmReq localQpn(int v) { u24(LOCAL_QPN_OFFSET, v); return this; }
    /** {@return the Responder Resources field} */
    public int responderResources() { return u8(RESPONDER_RESOURCES_OFFSET); }
    /**
     * Sets the Responder Resources field.
     *
     * @param v the responder resources
     * @return this
     */
    public CmReq responderResources(int v) { u8(RESPONDER_RESOURCES_OFFSET, v); return this; }
    /** {@return the Local EECN field} */
    public int localEecn() { return u24(LOCAL_EECN_OFFSET); }
    /** {@return the Initiator Depth field} */
    public int initiatorDepth() { return u8(INITIATOR_DEPTH_OFFSET); }
    /**
     * Sets the Initiator Depth field.
     *
     * @param v the initiator depth
     * @return this
     */
    public CmReq initiatorDepth(int v) { u8(INITIATOR_DEPTH_OFFSET, v); return this; }
    /** {@return the Remote EECN field} */
    public int remoteEecn() { return u24(REMOTE_EECN_OFFSET); }
    /** {@return the Remote CM Response Timeout field (5 bits, 4.096 us * 2^t)} */
    public int remoteCmResponseTimeout() { return bits(OFFSET67, 3, 5); }
    /**
     * Sets the Remote CM Response Timeout field.
     *
     * @param v the remote CM response timeout (5 bits)
     * @return this
     */
    public CmReq remoteCmResponseTimeout(int v) { bits(OFFSET67, 3, 5, v); return this; }
    /** {@return the Transport Service Type field (0 RC, 1 UC, 3 extended)} */
    public int transportServiceType() { return bits(OFFSET67, 1, 2); }
    /**
     * Sets the Transport Service Type field.
     *
     * @param v the transport service type (2 bits)
     * @return this
     */
    public CmReq transportServiceType(int v) { bits(OFFSET67, 1, 2, v); return this; }
    /** {@return the end-to-end flow control bit (the Flow Control field)} */
    public boolean flowControl() { return bits(OFFSET67, 0, 1) != 0; }
    /**
     * Sets the Flow Control field.
     *
     * @param v end-to-end flow control
     * @return this
     */
    public CmReq flowControl(boolean v) { bits(OFFSET67, 0, 1, v ? 1 : 0); return this; }
    /** {@return the Starting PSN field} */
    public int startingPsn() { return u24(STARTING_PSN_OFFSET); }
    /**
     * Sets the Starting PSN field.
     *
     * @param v the starting PSN (24 bits)
     * @return this
     */
    public CmReq startingPsn(int v) { u24(STARTING_PSN_OFFSET, v); return this; }
    /** {@return the Local CM Response Timeout field (5 bits)} */
    public int localCmResponseTimeout() { return bits(OFFSET71, 3, 5); }
    /**
     * Sets the Local CM Response Timeout field.
     *
     * @param v the local CM response timeout (5 bits)
     * @return this
     */
    public CmReq localCmResponseTimeout(int v) { bits(OFFSET71, 3, 5, v); return this; }
    /** {@return the Retry Count field (3 bits)} */
    public int retryCount() { return bits(OFFSET71, 0, 3); }
    /**
     * Sets the Retry Count field.
     *
     * @param v the retry count (3 bits)
     * @return this
     */
    public CmReq retryCount(int v) { bits(OFFSET71, 0, 3, v); return this; }
    /** {@return the P_Key (the Partition Key field)} */
    public int pkey() { return u16(PKEY_OFFSET); }
    /**
     * Sets the Partition Key field.
     *
     * @param v the P_Key
     * @return this
     */
    public CmReq pkey(int v) { u16(PKEY_OFFSET, v); return this; }
    /** {@return the Path MTU field (the ibv_mtu enum, 4 bits)} */
    public int pathMtu() { return bits(OFFSET74, 4, 4); }
    /**
     * Sets the Path MTU field.
     *
     * @param v the path MTU enum value
     * @return this
     */
    public CmReq pathMtu(int v) { bits(OFFSET74, 4, 4, v); return this; }
    /** {@return the RDC Exists field} */
    public boolean rdcExists() { return bits(OFFSET74, 3, 1) != 0; }
    /** {@return the RNR Retry Count field (3 bits)} */
    public int rnrRetryCount() { return bits(OFFSET74, 0, 3); }
    /**
     * Sets the RNR Retry Count field.
     *
     * @param v the RNR retry count (3 bits)
     * @return this
     */
    public CmReq rnrRetryCount(int v) { bits(OFFSET74, 0, 3, v); return this; }
    /** {@return the Max CM Retries field (4 bits)} */
    public int maxCmRetries() { return bits(OFFSET75, 4, 4); }
    /**
     * Sets the Max CM Retries field.
     *
     * @param v the max CM retries (4 bits)
     * @return this
     */
    public CmReq maxCmRetries(int v) { bits(OFFSET75, 4, 4, v); return this; }
    /** {@return the SRQ field} */
    public boolean srq() { return bits(OFFSET75, 3, 1) != 0; }
    /**
     * Sets the SRQ field.
     *
     * @param v whether the sender uses an SRQ
     * @return this
     */
    public CmReq srq(boolean v) { bits(OFFSET75, 3, 1, v ? 1 : 0); return this; }
    /** {@return the Extended Transport Type field (3 bits)} */
    public int extendedTransportType() { return bits(OFFSET75, 0, 3); }
    /** {@return the Primary Local LID field} */
    public int primaryLocalLid() { return u16(PRIMARY_LOCAL_LID_OFFSET); }
    /**
     * Sets the Primary Local LID field.
     *
     * @param v the primary local LID
     * @return this
     */
    public CmReq primaryLocalLid(int v) { u16(PRIMARY_LOCAL_LID_OFFSET, v); return this; }
    /** {@return the Primary Remote LID field} */
    public int primaryRemoteLid() { return u16(PRIMARY_REMOTE_LID_OFFSET); }
    /**
     * Sets the Primary Remote LID field.
     *
     * @param v the primary remote LID
     * @return this
     */
    public CmReq primaryRemoteLid(int v) { u16(PRIMARY_REMOTE_LID_OFFSET, v); return this; }
    /**
     * Copies the primary local GID into {@code dst}.
     *
     * @param dst 16 bytes
     */
    public void primaryLocalGid(byte[] dst) { gid(PRIMARY_LOCAL_GID_OFFSET, dst); }
    /**
     * Sets the Primary Local GID field.
     *
     * @param src the primary local GID (16 bytes)
     * @return this
     */
    public CmReq primaryLocalGidSet(byte[] src) { gidSet(PRIMARY_LOCAL_GID_OFFSET, src); return this; }
    /**
     * Copies the primary remote GID into {@code dst}.
     *
     * @param dst 16 bytes
     */
    public void primaryRemoteGid(byte[] dst) { gid(PRIMARY_REMOTE_GID_OFFSET, dst); }
    /**
     * Sets the Primary Remote GID field.
     *
     * @param src the primary remote GID (16 bytes)
     * @return this
     */
    public CmReq primaryRemoteGidSet(byte[] src) { gidSet(PRIMARY_REMOTE_GID_OFFSET, src); return this; }
    /** {@return the Primary Flow Label field (20 bits)} */
    public int primaryFlowLabel() { return u32(PRIMARY_FLOW_LABEL_OFFSET) >>> 12; }
    /**
     * Sets the Primary Flow Label field.
     *
     * @param v the flow label (20 bits)
     * @return this
     */
    public CmReq primaryFlowLabel(int v) {
        u32(PRIMARY_FLOW_LABEL_OFFSET, (v & 0xFFFFF) << 12 | u32(PRIMARY_FLOW_LABEL_OFFSET) & 0xFFF);
        return this;
    }
    /** {@return the Primary Packet Rate field (6 bits)} */
    public int primaryPacketRate() { return u32(PRIMARY_FLOW_LABEL_OFFSET) & 0x3F; }
    /**
     * Sets the Primary Packet Rate field.
     *
     * @param v the packet rate (6 bits)
     * @return this
     */
    public CmReq primaryPacketRate(int v) {
        u32(PRIMARY_FLOW_LABEL_OFFSET, u32(PRIMARY_FLOW_LABEL_OFFSET) & ~0x3F | v & 0x3F);
        return this;
    }
    /** {@return the Primary Traffic Class field} */
    public int primaryTrafficClass() { return u8(PRIMARY_TRAFFIC_CLASS_OFFSET); }
    /**
     * Sets the Primary Traffic Class field.
     *
     * @param v the traffic class
     * @return this
     */
    public CmReq primaryTrafficClass(int v) { u8(PRIMARY_TRAFFIC_CLASS_OFFSET, v); return this; }
    /** {@return the Primary Hop Limit field} */
    public int primaryHopLimit() { return u8(PRIMARY_HOP_LIMIT_OFFSET); }
    /**
     * Sets the Primary Hop Limit field.
     *
     * @param v the hop limit
     * @return this
     */
    public CmReq primaryHopLimit(int v) { u8(PRIMARY_HOP_LIMIT_OFFSET, v); return this; }
    /** {@return the Primary SL field (4 bits)} */
    public int primarySl() { return bits(PRIMARY_SL_OFFSET, 4, 4); }
    /**
     * Sets the Primary SL field.
     *
     * @param v the SL (4 bits)
     * @return this
     */
    public CmReq primarySl(int v) { bits(PRIMARY_SL_OFFSET, 4, 4, v); return this; }
    /** {@return the subnet local bit (the Primary Subnet Local field)} */
    public boolean primarySubnetLocal() { return bits(PRIMARY_SL_OFFSET, 3, 1) != 0; }
    /**
     * Sets the Primary Subnet Local field.
     *
     * @param v subnet local
     * @return this
     */
    public CmReq primarySubnetLocal(boolean v) { bits(PRIMARY_SL_OFFSET, 3, 1, v ? 1 : 0); return this; }
    /** {@return the Primary Local ACK Timeout field (5 bits)} */
    public int primaryLocalAckTimeout() { return bits(PRIMARY_LOCAL_ACK_TIMEOUT_OFFSET, 3, 5); }
    /**
     * Sets the Primary Local ACK Timeout field.
     *
     * @param v the local ACK timeout (5 bits)
     * @return this
     */
    public CmReq primaryLocalAckTimeout(int v) { bits(PRIMARY_LOCAL_ACK_TIMEOUT_OFFSET, 3, 5, v); return this; }
}
