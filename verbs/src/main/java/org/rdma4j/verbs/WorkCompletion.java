// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A work completion slot ({@code struct ibv_wc}). {@link CompletionQueue#poll} fills caller-owned
 * slots, so polling allocates nothing. Not thread safe.
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

    /** Allocates {@code n} slots for {@link CompletionQueue#poll}. */
    public static WorkCompletion[] array(int n) {
        WorkCompletion[] a = new WorkCompletion[n];
        for (int i = 0; i < n; i++) {
            a[i] = new WorkCompletion();
        }
        return a;
    }

    public long wrId() { return wrId; }
    public WcStatus status() { return status; }
    /** Valid only when {@link #status()} is SUCCESS (as in libibverbs). */
    public WcOpcode opcode() { return opcode; }
    public int vendorErr() { return vendorErr; }
    /** Bytes received (receives, READ), or transferred. */
    public int byteLen() { return byteLen; }
    /** The immediate value, valid when {@link #wcFlags()} has {@link WcFlag#WITH_IMM}. */
    public int immData() { return immData; }
    /** The rkey the sender invalidated, valid when {@link #wcFlags()} has {@link WcFlag#WITH_INV}. */
    public int invalidatedRkey() { return invalidatedRkey; }
    public int qpNum() { return qpNum; }
    /** Source QPN of a UD receive. */
    public int srcQp() { return srcQp; }
    /** {@link WcFlag} bits. */
    public int wcFlags() { return wcFlags; }
    public int pkeyIndex() { return pkeyIndex; }
    public int slid() { return slid; }
    public int sl() { return sl; }
    public int dlidPathBits() { return dlidPathBits; }

    /**
     * Which header the 40-byte GRH area of a UD receive holds (valid when {@link #wcFlags()} has
     * {@link WcFlag#GRH}): on RoCEv2 {@link NetworkHeaderType#IPV4} (the IPv4 header in the area's last
     * 20 bytes) or {@link NetworkHeaderType#IPV6}; {@link NetworkHeaderType#IB} for an IB GRH. Like the
     * kernel's {@code wc->network_hdr_type}; libibverbs' {@code ibv_wc} has no such field (rdma-core
     * guesses from the header, see {@link AhAttr#fromWc}).
     */
    public NetworkHeaderType networkHdrType() { return networkHdrType; }

    /** Sets {@link #networkHdrType()} (for providers; {@link #set} resets it to IB). */
    public void networkHdrType(NetworkHeaderType type) {
        this.networkHdrType = type;
    }

    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }

    /** Fills the slot (for providers). */
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
     */
    public void path(int pkeyIndex, int slid, int sl, int dlidPathBits) {
        this.pkeyIndex = pkeyIndex;
        this.slid = slid;
        this.sl = sl;
        this.dlidPathBits = dlidPathBits;
    }

    /** Copies another slot. */
    public void copyFrom(WorkCompletion o) {
        set(o.wrId, o.status, o.opcode, o.byteLen, o.qpNum, o.wcFlags, o.immData, o.invalidatedRkey, o.srcQp,
                o.vendorErr);
        pkeyIndex = o.pkeyIndex;
        slid = o.slid;
        sl = o.sl;
        dlidPathBits = o.dlidPathBits;
        networkHdrType = o.networkHdrType;
    }

    @Override
    public String toString() {
        return "WC[wr_id=" + wrId + ", status=" + status + ", opcode=" + opcode + ", byte_len=" + byteLen
                + ", qp=0x" + Integer.toHexString(qpNum) + ", flags=" + wcFlags
                + ((wcFlags & WcFlag.WITH_IMM) != 0 ? ", imm=0x" + Integer.toHexString(immData) : "")
                + ((wcFlags & WcFlag.WITH_INV) != 0 ? ", inv=0x" + Integer.toHexString(invalidatedRkey) : "")
                + (srcQp != 0 ? ", src_qp=0x" + Integer.toHexString(srcQp) : "") + "]";
    }
}
