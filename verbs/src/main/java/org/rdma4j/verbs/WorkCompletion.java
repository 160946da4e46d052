// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A work completion slot ({@code struct ibv_wc}). {@link CompletionQueue#poll} fills caller-owned
 * slots, so polling allocates nothing; a slot holds the last completion polled into it until the next
 * poll. Of a failed completion only {@link #wrId()}, {@link #status()}, {@link #vendorErr()} and
 * {@link #qpNum()} are meaningful, as in libibverbs. Not thread safe.
 */
public final class WorkCompletion {
    private long wrId;
    private WcStatus status = WcStatus.SUCCESS;
    private WcOpcode opcode = WcOpcode.SEND;
    private int vendorErr;
    private int byteLen;
    private int immData;
    private int invalidatedRkey;
    private int qpNum;
    private int srcQp;
    private int wcFlags;
    private int pkeyIndex;
    private int slid;
    private int sl;
    private int dlidPathBits;
    private NetworkHeaderType networkHdrType = NetworkHeaderType.IB;

    /**
     * Allocates {@code n} slots for {@link CompletionQueue#poll}: allocate once, poll many times.
     *
     * @param n the number of slots
     * @return a new array of {@code n} new slots
     */
    public static WorkCompletion[] array(int n) {
        WorkCompletion[] a = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            a[i] = new WorkCompletion();
        }
        return a;
    }

    /** An empty slot (status SUCCESS, opcode SEND, everything else 0); {@link #array(int)} makes many. */
    public WorkCompletion() {
    }

    /** {@return {@code wr_id}: the id of the work request that completed, as it was posted} */
    public long wrId() { return wrId; }
    /** {@return {@code status}: SUCCESS, or why the request failed (SEMANTICS S-ERR)} */
    public WcStatus status() { return status; }
    /**
     * {@return {@code opcode}: what completed; valid only when {@link #status()} is SUCCESS (as in
     * libibverbs)}
     */
    public WcOpcode opcode() { return opcode; }
    /** {@return {@code vendor_err}: the device's own error code of a failed completion, 0 if none} */
    public int vendorErr() { return vendorErr; }
    /**
     * {@return {@code byte_len}: the bytes received (receives; on UD the 40-byte GRH included) or read
     * (RDMA READ), else the bytes transferred; unsigned}
     */
    public int byteLen() { return byteLen; }
    /**
     * {@return {@code imm_data}: the immediate value, valid when {@link #wcFlags()} has
     * {@link WcFlag#WITH_IMM}}
     */
    public int immData() { return immData; }
    /**
     * {@return {@code invalidated_rkey}: the rkey the sender invalidated, valid when {@link #wcFlags()}
     * has {@link WcFlag#WITH_INV}}
     */
    public int invalidatedRkey() { return invalidatedRkey; }
    /** {@return {@code qp_num}: the local QP the request belonged to (24 bits)} */
    public int qpNum() { return qpNum; }
    /** {@return {@code src_qp}: the sender's QPN of a UD receive (24 bits), else 0} */
    public int srcQp() { return srcQp; }
    /** {@return {@code wc_flags}: {@link WcFlag} bits} */
    public int wcFlags() { return wcFlags; }
    /** {@return {@code pkey_index}: the P_Key index of a UD receive, else 0} */
    public int pkeyIndex() { return pkeyIndex; }
    /** {@return {@code slid}: the sender's LID of a UD receive; 0 on RoCE} */
    public int slid() { return slid; }
    /** {@return {@code sl}: the service level of a UD receive} */
    public int sl() { return sl; }
    /** {@return {@code dlid_path_bits}: the destination LID path bits of a UD receive; 0 on RoCE} */
    public int dlidPathBits() { return dlidPathBits; }

    /**
     * Which header the 40-byte GRH area of a UD receive holds (valid when {@link #wcFlags()} has
     * {@link WcFlag#GRH}): on RoCEv2 {@link NetworkHeaderType#IPV4} (the IPv4 header in the area's last
     * 20 bytes) or {@link NetworkHeaderType#IPV6}; {@link NetworkHeaderType#IB} for an IB GRH. Like the
     * kernel's {@code wc->network_hdr_type}; libibverbs' {@code ibv_wc} has no such field (rdma-core
     * guesses from the header, see {@link AhAttr#fromWc}).
     *
     * @return the header type, {@link NetworkHeaderType#IB} unless the provider set it
     */
    public NetworkHeaderType networkHdrType() { return networkHdrType; }

    /**
     * Sets {@link #networkHdrType()} (for providers; {@link #set} resets it to IB).
     *
     * @param type the header type of the receive
     */
    public void networkHdrType(NetworkHeaderType type) {
        this.networkHdrType = type;
    }

    /** {@return whether {@link #status()} is {@link WcStatus#SUCCESS}} */
    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }

    /**
     * Fills the slot (for providers); clears the addressing fields of {@link #path} and sets the network
     * header type to IB.
     *
     * @param wrId            {@code wr_id}
     * @param status          {@code status}
     * @param opcode          {@code opcode}
     * @param byteLen         {@code byte_len}
     * @param qpNum           {@code qp_num}
     * @param wcFlags         {@code wc_flags}
     * @param immData         {@code imm_data}
     * @param invalidatedRkey {@code invalidated_rkey}
     * @param srcQp           {@code src_qp}
     * @param vendorErr       {@code vendor_err}
     */
    public void set(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int qpNum, int wcFlags,
                    int immData, int invalidatedRkey, int srcQp, int vendorErr) {
        this.wrId = wrId;
        this.status = status;
        this.opcode = opcode;
        this.byteLen = byteLen;
        this.qpNum = qpNum;
        this.wcFlags = wcFlags;
        this.immData = immData;
        this.invalidatedRkey = invalidatedRkey;
        this.srcQp = srcQp;
        this.vendorErr = vendorErr;
        this.pkeyIndex = 0;
        this.slid = 0;
        this.sl = 0;
        this.dlidPathBits = 0;
        this.networkHdrType = NetworkHeaderType.IB;
    }

    /**
     * Sets the addressing fields a provider reports beside {@link #set}: the P_Key index, source LID,
     * service level and destination LID path bits of the packet (on RoCE the LIDs are 0). Call after
     * {@code set}, which clears them.
     *
     * @param pkeyIndex    {@code pkey_index}
     * @param slid         {@code slid}
     * @param sl           {@code sl}
     * @param dlidPathBits {@code dlid_path_bits}
     */
    public void path(int pkeyIndex, int slid, int sl, int dlidPathBits) {
        this.pkeyIndex = pkeyIndex;
        this.slid = slid;
        this.sl = sl;
        this.dlidPathBits = dlidPathBits;
    }

    /**
     * Copies every field of another slot into this one.
     *
     * @param o the slot to copy
     */
    public void copyFrom(WorkCompletion o) {
        set(o.wrId, o.status, o.opcode, o.byteLen, o.qpNum, o.wcFlags, o.immData, o.invalidatedRkey, o.srcQp,
                o.vendorErr);
        pkeyIndex = o.pkeyIndex;
        slid = o.slid;
        sl = o.sl;
        dlidPathBits = o.dlidPathBits;
        networkHdrType = o.networkHdrType;
    }

    /** {@return the fields a reader needs, e.g. {@code WC[wr_id=1, status=SUCCESS, opcode=SEND, ...]}} */
    @Override
    public String toString() {
        return "WC[wr_id=" + wrId + ", status=" + status + ", opcode=" + opcode + ", byte_len=" + byteLen
                + ", qp=0x" + Integer.toHexString(qpNum) + ", flags=" + wcFlags
                + ((wcFlags & WcFlag.WITH_IMM) != 0 ? ", imm=0x" + Integer.toHexString(immData) : "")
                + ((wcFlags & WcFlag.WITH_INV) != 0 ? ", inv=0x" + Integer.toHexString(invalidatedRkey) : "")
                + (srcQp != 0 ? ", src_qp=0x" + Integer.toHexString(srcQp) : "") + "]";
    }
}
