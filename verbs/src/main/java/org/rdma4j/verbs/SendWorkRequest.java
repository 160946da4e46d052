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

    /** An empty SEND request with room for 4 gather entries (more grow the arrays once). */
    public SendWorkRequest() {
        super(4);
    }

    /** {@return {@code wr_id}: the caller's value, given back in the request's work completion} */
    public long wrId() { return wrId; }
    /** {@return {@code opcode}: the operation, SEND for a fresh request} */
    public WrOpcode opcode() { return opcode; }
    /** {@return {@code send_flags}: the {@link SendFlag} bits} */
    public int sendFlags() { return sendFlags; }
    /**
     * {@return {@code imm_data}: the immediate value of SEND_WITH_IMM and RDMA_WRITE_WITH_IMM, the 32
     * bits sent on the wire (network order when viewed as bytes)}
     */
    public int immData() { return immData; }
    /** {@return {@code invalidate_rkey}: the rkey to invalidate (SEND_WITH_INV, LOCAL_INV)} */
    public int invalidateRkey() { return invalidateRkey; }
    /** {@return {@code wr.rdma.remote_addr} or {@code wr.atomic.remote_addr}: the peer's virtual address} */
    public long remoteAddr() { return remoteAddr; }
    /** {@return {@code wr.rdma.rkey} or {@code wr.atomic.rkey}: the peer's key for {@link #remoteAddr()}} */
    public int rkey() { return rkey; }
    /** {@return {@code wr.atomic.compare_add}: the compare value (CMP_SWAP) or the addend (FETCH_ADD)} */
    public long compareAdd() { return compareAdd; }
    /** {@return {@code wr.atomic.swap}: the value CMP_SWAP writes when the compare matches} */
    public long swap() { return swap; }
    /** {@return {@code wr.ud.ah}: the address handle of a UD send, or null} */
    public AddressHandle ah() { return ah; }
    /** {@return {@code wr.ud.remote_qpn}: the destination QPN of a UD send (0xFFFFFF for multicast)} */
    public int remoteQpn() { return remoteQpn; }
    /** {@return {@code wr.ud.remote_qkey}: the Q_Key of a UD send} */
    public int remoteQkey() { return remoteQkey; }
    /** {@return {@code bind_mw.mw}: the type-2 window a BIND_MW binds, or null} */
    public MemoryWindow mw() { return mw; }
    /** {@return {@code bind_mw.rkey}: the window's new rkey ({@link MemoryWindow#nextRkey()})} */
    public int bindRkey() { return bindRkey; }
    /** {@return {@code bind_mw.bind_info.mr}: the region a BIND_MW binds to, or null} */
    public MemoryRegion bindMr() { return bindMr; }
    /** {@return {@code bind_mw.bind_info.addr}: the first address the window grants} */
    public long bindAddr() { return bindAddr; }
    /** {@return {@code bind_mw.bind_info.length}: the window's length in bytes, 0 to unbind} */
    public long bindLength() { return bindLength; }
    /** {@return {@code bind_mw.bind_info.mw_access_flags}: the {@link Access} bits the window grants} */
    public int bindAccess() { return bindAccess; }
    /** {@return {@code next}: the next request of the chain, or null for the last} */
    public SendWorkRequest next() { return next; }

    /**
     * Sets {@link #wrId()}.
     *
     * @param id any value; rdma4j does not look at it
     * @return this request
     */
    public SendWorkRequest wrId(long id) { wrId = id; return this; }
    /**
     * Sets the operation alone, for code that picks it at run time; prefer the operation methods
     * ({@link #write}, {@link #send()}, ...), which also set what the operation needs.
     *
     * @param op the opcode
     * @return this request
     */
    public SendWorkRequest opcode(WrOpcode op) { opcode = op; return this; }
    /**
     * Sets the {@link SendFlag} bits ({@code send_flags}), replacing the earlier ones.
     *
     * @param flags {@link SendFlag} bits, e.g. {@code SendFlag.SIGNALED | SendFlag.FENCE}
     * @return this request
     */
    public SendWorkRequest flags(int flags) { sendFlags = flags; return this; }
    /**
     * Sets {@link #immData()} without changing the opcode (see {@link #sendWithImm}, {@link #writeWithImm}).
     *
     * @param imm the immediate value
     * @return this request
     */
    public SendWorkRequest immData(int imm) { immData = imm; return this; }
    /**
     * Sets {@link #invalidateRkey()} without changing the opcode (see {@link #sendWithInvalidate},
     * {@link #localInvalidate}).
     *
     * @param key the rkey to invalidate
     * @return this request
     */
    public SendWorkRequest invalidateRkey(int key) { invalidateRkey = key; return this; }
    /**
     * Chains {@code n} after this request: one post submits the chain in order.
     *
     * @param n the next request, or null to end the chain here
     * @return this request
     */
    public SendWorkRequest next(SendWorkRequest n) { next = n; return this; }

    /**
     * Clears the gather list and any inline segment (keeps everything else).
     *
     * @return this request
     */
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
     *
     * @param data the bytes to send (any memory, heap included), or null
     * @return this request
     */
    public SendWorkRequest inlineData(java.lang.foreign.MemorySegment data) {
        inlineData = data;
        return this;
    }

    /** {@return the inline segment, or null when the gather list is sent} */
    public java.lang.foreign.MemorySegment inlineData() {
        return inlineData;
    }

    /** {@return the bytes this request carries: the inline segment's size, else the gather list's total} */
    public long payloadLength() {
        return inlineData != null ? inlineData.byteSize() : totalLength();
    }

    /**
     * Appends a gather entry ({@code struct ibv_sge}) covering {@code length} bytes at {@code offset}
     * into {@code mr}. The range is checked when the request executes: outside the region, it completes
     * LOC_PROT_ERR (S-ERR-7).
     *
     * @param mr     the region (its address and lkey are read now)
     * @param offset the offset into the region in bytes
     * @param length the length in bytes (unsigned 32-bit)
     * @return this request
     */
    public SendWorkRequest sge(MemoryRegion mr, long offset, int length) {
        appendSge(mr.address() + offset, length, mr.lkey());
        return this;
    }

    /**
     * Appends a raw gather entry ({@code struct ibv_sge}).
     *
     * @param addr   the virtual address of the first byte
     * @param length the length in bytes (unsigned 32-bit)
     * @param lkey   the lkey of a region holding the range
     * @return this request
     */
    public SendWorkRequest sge(long addr, int length, int lkey) {
        appendSge(addr, length, lkey);
        return this;
    }

    /**
     * Replaces gather entry {@code i}, e.g. to point a reused request at the next buffer.
     *
     * @param i      the entry, below {@link #numSge()}
     * @param addr   the virtual address of the first byte
     * @param length the length in bytes
     * @param lkey   the lkey of a region holding the range
     * @return this request
     * @throws IndexOutOfBoundsException if there is no entry {@code i}
     */
    public SendWorkRequest setSge(int i, long addr, int length, int lkey) {
        replaceSge(i, addr, length, lkey);
        return this;
    }

    /**
     * Makes this an {@code IBV_WR_SEND} of the gather list (or inline data) into the peer's next
     * receive (S-DATA-1).
     *
     * @return this request
     */
    public SendWorkRequest send() {
        opcode = WrOpcode.SEND;
        return this;
    }

    /**
     * Makes this an {@code IBV_WR_SEND_WITH_IMM}: a SEND that also hands {@code imm} to the receiver's
     * completion ({@link WcFlag#WITH_IMM}).
     *
     * @param imm the immediate value
     * @return this request
     */
    public SendWorkRequest sendWithImm(int imm) {
        opcode = WrOpcode.SEND_WITH_IMM;
        immData = imm;
        return this;
    }

    /**
     * Makes this an {@code IBV_WR_SEND_WITH_INV}: a SEND that also invalidates
     * {@code rkeyToInvalidate} at the receiver (a type-2 window's rkey, S-MW-4). RC only.
     *
     * @param rkeyToInvalidate the receiver's rkey to invalidate
     * @return this request
     */
    public SendWorkRequest sendWithInvalidate(int rkeyToInvalidate) {
        opcode = WrOpcode.SEND_WITH_INV;
        invalidateRkey = rkeyToInvalidate;
        return this;
    }

    /**
     * Makes this an {@code IBV_WR_RDMA_WRITE} of the gather list (or inline data) to
     * {@code remoteAddress}; it consumes no receive at the peer (S-DATA-3). RC and UC.
     *
     * @param remoteAddress the peer's virtual address
     * @param remoteKey     the peer's rkey (region or window with remote write)
     * @return this request
     */
    public SendWorkRequest write(long remoteAddress, int remoteKey) {
        opcode = WrOpcode.RDMA_WRITE;
        remoteAddr = remoteAddress;
        rkey = remoteKey;
        return this;
    }

    /**
     * Makes this an RDMA_WRITE_WITH_IMM: an RDMA WRITE that also consumes a receive at the peer, which
     * completes with {@code imm} as RECV_RDMA_WITH_IMM (S-DATA-3). RC and UC.
     *
     * @param remoteAddress the peer's virtual address
     * @param remoteKey     the peer's rkey
     * @param imm           the immediate value
     * @return this request
     */
    public SendWorkRequest writeWithImm(long remoteAddress, int remoteKey, int imm) {
        opcode = WrOpcode.RDMA_WRITE_WITH_IMM;
        remoteAddr = remoteAddress;
        rkey = remoteKey;
        immData = imm;
        return this;
    }

    /**
     * Makes this an {@code IBV_WR_RDMA_READ} from {@code remoteAddress} into the scatter list given as
     * gather entries (S-DATA-4). RC only; the regions written need LOCAL_WRITE.
     *
     * @param remoteAddress the peer's virtual address
     * @param remoteKey     the peer's rkey (with remote read)
     * @return this request
     */
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
     *
     * @param remoteAddress the peer's virtual address
     * @param remoteKey     the peer's rkey
     * @return this request
     * @throws IllegalStateException if the opcode does not address remote memory
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

    /**
     * Makes this an {@code IBV_WR_ATOMIC_CMP_AND_SWP} of the 8 bytes at {@code remoteAddress}: if they
     * equal {@code compare} they become {@code swapValue}; the original value is written to the one
     * 8-byte gather entry (S-DATA-5). RC only.
     *
     * @param remoteAddress the peer's address, 8-byte aligned (else EINVAL at post)
     * @param remoteKey     the peer's rkey (with remote atomic)
     * @param compare       the value expected
     * @param swapValue     the value written on a match
     * @return this request
     */
    public SendWorkRequest compareAndSwap(long remoteAddress, int remoteKey, long compare, long swapValue) {
        opcode = WrOpcode.ATOMIC_CMP_AND_SWP;
        remoteAddr = remoteAddress;
        rkey = remoteKey;
        compareAdd = compare;
        swap = swapValue;
        return this;
    }

    /**
     * Makes this an {@code IBV_WR_ATOMIC_FETCH_AND_ADD} of the 8 bytes at {@code remoteAddress}: adds
     * {@code add} and writes the original value to the one 8-byte gather entry (S-DATA-5). RC only.
     *
     * @param remoteAddress the peer's address, 8-byte aligned (else EINVAL at post)
     * @param remoteKey     the peer's rkey (with remote atomic)
     * @param add           the addend
     * @return this request
     */
    public SendWorkRequest fetchAdd(long remoteAddress, int remoteKey, long add) {
        opcode = WrOpcode.ATOMIC_FETCH_AND_ADD;
        remoteAddr = remoteAddress;
        rkey = remoteKey;
        compareAdd = add;
        swap = 0;
        return this;
    }

    /**
     * Sets the UD destination ({@code wr.ud}); the opcode stays (SEND or SEND_WITH_IMM).
     *
     * @param addressHandle the route to the destination, of the QP's PD
     * @param qpn           the destination QPN, 0xFFFFFF for a multicast group (S-UD-6)
     * @param qkey          the destination's Q_Key (a datagram with the wrong one is dropped, S-UD-3)
     * @return this request
     */
    public SendWorkRequest ud(AddressHandle addressHandle, int qpn, int qkey) {
        ah = addressHandle;
        remoteQpn = qpn;
        remoteQkey = qkey;
        return this;
    }

    /**
     * Makes this a BIND_MW of a type-2 window: {@code newRkey} must be {@code inc_rkey} of the window's
     * current rkey ({@link MemoryWindow#nextRkey()}); length 0 unbinds (S-MW-1). A failed bind
     * completes MW_BIND_ERR.
     *
     * @param window the type-2 window
     * @param newRkey the rkey the window gets
     * @param mr     the region to bind to (registered with {@link Access#MW_BIND}), null to unbind
     * @param addr   the first address the window grants
     * @param length the window's length in bytes; 0 unbinds
     * @param access the remote {@link Access} bits granted
     * @return this request
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

    /**
     * Makes this an {@code IBV_WR_LOCAL_INV} of {@code key}: the type-2 window (or fast-registration
     * MR) stops granting access (S-MW-3); a plain MR's key fails locally and stays valid (S-MW-4).
     *
     * @param key the rkey to invalidate
     * @return this request
     */
    public SendWorkRequest localInvalidate(int key) {
        opcode = WrOpcode.LOCAL_INV;
        invalidateRkey = key;
        return this;
    }
}
