// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.cm.wire.CmRep;
import org.rdma4j.cm.wire.CmaHeader;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * Connection parameters ({@code struct rdma_conn_param}) for {@link CmId#connect}, {@link CmId#accept}
 * and, filled in from the peer's message, in {@link CmEvent#param()}.
 *
 * <p>Private data limits on RoCE with rdma_cm's IP header: {@value #MAX_REQ_PRIVATE_DATA} bytes in
 * connect (92 in the REQ less the 36-byte header), {@value #MAX_REP_PRIVATE_DATA} in accept,
 * {@value #MAX_REJ_PRIVATE_DATA} in reject. Not thread safe: a plain value holder.
 */
public final class ConnParam {
    /** Most private data connect carries. */
    public static final int MAX_REQ_PRIVATE_DATA = CmaHeader.REQ_USER_DATA_LENGTH;
    /** Most private data connect carries on a UD id (SIDR_REQ: 216 less the 36-byte header). */
    public static final int MAX_SIDR_REQ_PRIVATE_DATA = CmaHeader.SIDR_REQ_USER_DATA_LENGTH;
    /** Most private data accept or reject carries on a UD id (SIDR_REP). */
    public static final int MAX_SIDR_REP_PRIVATE_DATA = org.rdma4j.cm.wire.SidrRep.PRIVATE_DATA_LENGTH;
    /** Most private data accept carries. */
    public static final int MAX_REP_PRIVATE_DATA = CmRep.PRIVATE_DATA_LENGTH;
    /** Most private data reject carries. */
    public static final int MAX_REJ_PRIVATE_DATA = CmRej.PRIVATE_DATA_LENGTH;

    private byte[] privateData = new byte[0];
    private int responderResources = 1;
    private int initiatorDepth = 1;
    private boolean flowControl = true;
    private int retryCount = 7;
    private int rnrRetryCount = 7;
    private boolean srq;
    private int qpNum;

    /** Parameters with rdma_cm's usual values: 1 read in each direction, retry 7, RNR retry 7. */
    public ConnParam() {
    }

    /** {@return a copy of the private data ({@code private_data}, {@code private_data_len})} */
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * Sets the private data (copied); its limit is checked when it is sent.
     *
     * @param data the bytes (null: none)
     * @return this
     */
    public ConnParam privateData(byte[] data) {
        this.privateData = data == null ? new byte[0] : data.clone();
        return this;
    }

    /** {@return how many RDMA READ/atomic requests the peer may have outstanding at us ({@code responder_resources})} */
    public int responderResources() {
        return responderResources;
    }

    /**
     * Sets {@code responder_resources}: the RDMA READ and atomic requests the peer may have outstanding at
     * this side (the REQ's and REP's Responder Resources field).
     *
     * @param v responder resources (0..255)
     * @return this
     * @throws VerbsException EINVAL outside 0..255
     */
    public ConnParam responderResources(int v) {
        this.responderResources = range(v, 255, "responder resources");
        return this;
    }

    /** {@return how many RDMA READ/atomic requests we may have outstanding at the peer ({@code initiator_depth})} */
    public int initiatorDepth() {
        return initiatorDepth;
    }

    /**
     * Sets {@code initiator_depth}: the RDMA READ and atomic requests this side may have outstanding at the
     * peer (the REQ's and REP's Initiator Depth field).
     *
     * @param v initiator depth (0..255)
     * @return this
     * @throws VerbsException EINVAL outside 0..255
     */
    public ConnParam initiatorDepth(int v) {
        this.initiatorDepth = range(v, 255, "initiator depth");
        return this;
    }

    /** {@return whether end-to-end flow control is claimed ({@code flow_control})} */
    public boolean flowControl() {
        return flowControl;
    }

    /**
     * Sets {@code flow_control}: whether this side claims end-to-end flow control (the REQ's and REP's
     * End-to-End Flow Control bit).
     *
     * @param v end-to-end flow control
     * @return this
     */
    public ConnParam flowControl(boolean v) {
        this.flowControl = v;
        return this;
    }

    /** {@return the transport retry count ({@code retry_count}, 0..7)} */
    public int retryCount() {
        return retryCount;
    }

    /**
     * Sets {@code retry_count}: how often the peer's QP retransmits before it fails with RETRY_EXC_ERR (the
     * REQ's Retry Count field; connect only).
     *
     * @param v the transport retry count (0..7)
     * @return this
     * @throws VerbsException EINVAL outside 0..7
     */
    public ConnParam retryCount(int v) {
        this.retryCount = range(v, 7, "retry count");
        return this;
    }

    /** {@return the RNR retry count ({@code rnr_retry_count}, 0..7, 7 = forever)} */
    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    /**
     * Sets {@code rnr_retry_count}: how often the peer's QP retries after an RNR NAK, 7 without end (the
     * REQ's and REP's RNR Retry Count field).
     *
     * @param v the RNR retry count (0..7)
     * @return this
     * @throws VerbsException EINVAL outside 0..7
     */
    public ConnParam rnrRetryCount(int v) {
        this.rnrRetryCount = range(v, 7, "RNR retry count");
        return this;
    }

    /** {@return whether the QP uses an SRQ ({@code srq})} */
    public boolean srq() {
        return srq;
    }

    /**
     * Sets {@code srq}: whether this side's QP receives from a shared receive queue (the REQ's and REP's SRQ
     * bit).
     *
     * @param v whether the QP uses an SRQ
     * @return this
     */
    public ConnParam srq(boolean v) {
        this.srq = v;
        return this;
    }

    /** {@return the QP number announced when the id has no QP of its own ({@code qp_num}; 0: use the id's QP)} */
    public int qpNum() {
        return qpNum;
    }

    /**
     * Sets {@code qp_num}: the QP number the REQ or REP announces (Local QPN) for an id without a QP of its
     * own ({@link CmId#createQp} not called: the program's own QP, moved with {@link CmId#initQpAttr}).
     *
     * @param v the QP number to announce when the id has no QP (24 bits kept)
     * @return this
     */
    public ConnParam qpNum(int v) {
        this.qpNum = v & 0xFFFFFF;
        return this;
    }

    byte[] rawPrivateData() {
        return privateData;
    }

    void checkPrivateData(int max, String what) {
        if (privateData.length > max) {
            throw new VerbsException(Errno.EINVAL, what + ": at most " + max + " bytes of private data, got "
                    + privateData.length);
        }
    }

    private static int range(int v, int max, String what) {
        if (v < 0 || v > max) {
            throw new VerbsException(Errno.EINVAL, "ConnParam: " + what + " must be 0.." + max + ", got " + v);
        }
        return v;
    }

    @Override
    public String toString() {
        return "ConnParam[responderResources=" + responderResources + ", initiatorDepth=" + initiatorDepth
                + ", retryCount=" + retryCount + ", rnrRetryCount=" + rnrRetryCount + ", srq=" + srq + ", qpNum="
                + qpNum + ", privateData=" + privateData.length + " bytes]";
    }
}
