// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A send work request ({@code struct ibv_send_wr}). Reusable: set it up once, change the fields that
 * vary and post again; neither the setters nor posting allocate. Chain several with {@link #next}.
 * Not thread safe.
 *
 * <p>Each operation has a method that sets the opcode together with what the operation needs
 * ({@link #write}, {@link #writeWithImm}, {@link #read}, {@link #send()}, {@link #sendWithImm},
 * {@link #sendWithInvalidate}, {@link #fetchAdd}, {@link #compareAndSwap}, {@link #bindMw},
 * {@link #localInvalidate}), so a request cannot name a remote buffer and still go out as a SEND. A
 * fresh request is a SEND.
 * {@snippet :
 * SendWorkRequest wr = new SendWorkRequest()
 *         .wrId(1).flags(SendFlag.SIGNALED)
 *         .sge(localMr, 0, 8).write(remoteAddr, remoteRkey);
 * qp.postSend(wr);
 * }
 */
public final class SendWorkRequest extends ScatterGatherList {
    private long wrId;
    private WrOpcode opcode = WrOpcode.SEND;
    private int sendFlags;
    private int immData;
    private int invalidateRkey;
    private long remoteAddr;
    private int rkey;
    private long compareAdd;
    private long swap;
    private AddressHandle ah;
    private int remoteQpn;
    private int remoteQkey;
    private MemoryWindow mw;
    private int bindRkey;
    private MemoryRegion bindMr;
    private long bindAddr;
    private long bindLength;
    private int bindAccess;
    private SendWorkRequest next;
    private java.lang.foreign.MemorySegment inlineData;

    public SendWorkRequest() {
        super(4);
    }

    public long wrId() { return wrId; }
    public WrOpcode opcode() { return opcode; }
    public int sendFlags() { return sendFlags; }
    /** The immediate value, the 32 bits sent on the wire (network order when viewed as bytes). */
    public int immData() { return immData; }
    /** The rkey to invalidate (SEND_WITH_INV, LOCAL_INV). */
    public int invalidateRkey() { return invalidateRkey; }
    public long remoteAddr() { return remoteAddr; }
    public int rkey() { return rkey; }
    /** Compare value (CMP_SWAP) or addend (FETCH_ADD). */
    public long compareAdd() { return compareAdd; }
    public long swap() { return swap; }
    public AddressHandle ah() { return ah; }
    public int remoteQpn() { return remoteQpn; }
    public int remoteQkey() { return remoteQkey; }
    public MemoryWindow mw() { return mw; }
    public int bindRkey() { return bindRkey; }
    public MemoryRegion bindMr() { return bindMr; }
    public long bindAddr() { return bindAddr; }
    public long bindLength() { return bindLength; }
    public int bindAccess() { return bindAccess; }
    public SendWorkRequest next() { return next; }

    public SendWorkRequest wrId(long id) { wrId = id; return this; }
    public SendWorkRequest opcode(WrOpcode op) { opcode = op; return this; }
    /** Sets the {@link SendFlag} bits. */
    public SendWorkRequest flags(int flags) { sendFlags = flags; return this; }
    public SendWorkRequest immData(int imm) { immData = imm; return this; }
    public SendWorkRequest invalidateRkey(int key) { invalidateRkey = key; return this; }
    public SendWorkRequest next(SendWorkRequest n) { next = n; return this; }

    /** Clears the gather list and any inline segment (keeps everything else). */
    public SendWorkRequest clear() {
        clearSges();
        inlineData = null;
        return this;
    }

    /**
     * Sends the bytes of {@code data} as inline data (SEND or RDMA WRITE): they are copied at post
     * time, need no registration, and replace the gather list; {@link SendFlag#INLINE} is implied.
     * The Java form of an inline SGE pointing at unregistered memory. Pass null to go back to the
     * gather list.
     */
    public SendWorkRequest inlineData(java.lang.foreign.MemorySegment data) {
        inlineData = data;
        return this;
    }

    /** The inline segment, or null. */
    public java.lang.foreign.MemorySegment inlineData() {
        return inlineData;
    }

    /** Bytes this request carries: the inline segment's size, else the gather list's total. */
    public long payloadLength() {
        return inlineData != null ? inlineData.byteSize() : totalLength();
    }

    /** Appends a gather entry covering {@code length} bytes at {@code offset} into {@code mr}. */
    public SendWorkRequest sge(MemoryRegion mr, long offset, int length) {
        appendSge(mr.address() + offset, length, mr.lkey());
        return this;
    }

    /** Appends a raw gather entry. */
    public SendWorkRequest sge(long addr, int length, int lkey) {
        appendSge(addr, length, lkey);
        return this;
    }

    /** Replaces gather entry {@code i}. */
    public SendWorkRequest setSge(int i, long addr, int length, int lkey) {
        replaceSge(i, addr, length, lkey);
        return this;
    }

    /** Makes this a SEND of the gather list (or inline data) into the peer's next receive. */
    public SendWorkRequest send() {
        opcode = WrOpcode.SEND;
        return this;
    }

    /** Makes this a SEND_WITH_IMM: a SEND that also hands {@code imm} to the receiver's completion. */
    public SendWorkRequest sendWithImm(int imm) {
        opcode = WrOpcode.SEND_WITH_IMM;
        immData = imm;
        return this;
    }

    /** Makes this a SEND_WITH_INV: a SEND that also invalidates {@code rkeyToInvalidate} at the receiver. */
    public SendWorkRequest sendWithInvalidate(int rkeyToInvalidate) {
        opcode = WrOpcode.SEND_WITH_INV;
        invalidateRkey = rkeyToInvalidate;
        return this;
    }

    /** Makes this an RDMA WRITE of the gather list (or inline data) to {@code remoteAddress}. */
    public SendWorkRequest write(long remoteAddress, int remoteKey) {
        opcode = WrOpcode.RDMA_WRITE;
        remoteAddr = remoteAddress;
        rkey = remoteKey;
        return this;
    }

    /**
     * Makes this an RDMA_WRITE_WITH_IMM: an RDMA WRITE that also consumes a receive at the peer, which
     * completes with {@code imm}.
     */
    public SendWorkRequest writeWithImm(long remoteAddress, int remoteKey, int imm) {
        opcode = WrOpcode.RDMA_WRITE_WITH_IMM;
        remoteAddr = remoteAddress;
        rkey = remoteKey;
        immData = imm;
        return this;
    }

    /** Makes this an RDMA READ from {@code remoteAddress} into the scatter list given as gather entries. */
    public SendWorkRequest read(long remoteAddress, int remoteKey) {
        opcode = WrOpcode.RDMA_READ;
        remoteAddr = remoteAddress;
        rkey = remoteKey;
        return this;
    }

    /**
     * Sets the remote buffer of the opcode already set with {@link #opcode(WrOpcode)}, for code that
     * picks the operation at run time; prefer {@link #write}, {@link #read} and the other operation
     * methods. Throws {@link IllegalStateException} unless the opcode addresses remote memory (an RDMA
     * WRITE, READ or atomic), so a remote buffer is never silently ignored by a SEND.
     */
    public SendWorkRequest rdma(long remoteAddress, int remoteKey) {
        switch (opcode) {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD -> { }
            default -> throw new IllegalStateException("a remote buffer for a " + opcode
                    + " request: set the opcode first, or use write(), read(), fetchAdd() or compareAndSwap()");
        }
        remoteAddr = remoteAddress;
        rkey = remoteKey;
        return this;
    }

    /** Makes this an ATOMIC_CMP_AND_SWP of the 8 bytes at {@code remoteAddress}. */
    public SendWorkRequest compareAndSwap(long remoteAddress, int remoteKey, long compare, long swapValue) {
        opcode = WrOpcode.ATOMIC_CMP_AND_SWP;
        remoteAddr = remoteAddress;
        rkey = remoteKey;
        compareAdd = compare;
        swap = swapValue;
        return this;
    }

    /** Makes this an ATOMIC_FETCH_AND_ADD of the 8 bytes at {@code remoteAddress}. */
    public SendWorkRequest fetchAdd(long remoteAddress, int remoteKey, long add) {
        opcode = WrOpcode.ATOMIC_FETCH_AND_ADD;
        remoteAddr = remoteAddress;
        rkey = remoteKey;
        compareAdd = add;
        swap = 0;
        return this;
    }

    /** UD destination: address handle, remote QPN and Q_Key. */
    public SendWorkRequest ud(AddressHandle addressHandle, int qpn, int qkey) {
        ah = addressHandle;
        remoteQpn = qpn;
        remoteQkey = qkey;
        return this;
    }

    /**
     * Makes this a BIND_MW of a type-2 window: {@code newRkey} must be {@code inc_rkey} of the window's
     * current rkey ({@link MemoryWindow#nextRkey()}); length 0 unbinds.
     */
    public SendWorkRequest bindMw(MemoryWindow window, int newRkey, MemoryRegion mr, long addr, long length,
                                  int access) {
        opcode = WrOpcode.BIND_MW;
        mw = window;
        bindRkey = newRkey;
        bindMr = mr;
        bindAddr = addr;
        bindLength = length;
        bindAccess = access;
        return this;
    }

    /** Makes this a LOCAL_INV of {@code key} (an MR or type-2 window rkey). */
    public SendWorkRequest localInvalidate(int key) {
        opcode = WrOpcode.LOCAL_INV;
        invalidateRkey = key;
        return this;
    }
}
