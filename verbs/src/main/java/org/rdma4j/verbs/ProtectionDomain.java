package org.rdma4j.verbs;

import java.lang.foreign.MemorySegment;

/** A protection domain ({@code struct ibv_pd}). Thread safe. */
public interface ProtectionDomain extends VerbsResource {
    Context context();

    /**
     * {@code ibv_reg_mr}: registers {@code segment} with {@link Access} bits {@code access}.
     * REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE: EINVAL. The same memory may be registered
     * several times; each registration has its own keys. The region's address is
     * {@code segment.address()}.
     *
     * <p>Only native memory can be registered: a segment of an {@link java.lang.foreign.Arena} (shared,
     * global or automatic) or memory the program mapped. A heap segment
     * ({@link MemorySegment#ofArray(byte[])}, a non-direct {@code ByteBuffer}) is refused with EINVAL on
     * every provider, with the same message: a NIC cannot DMA into the Java heap, so code tested on the
     * software device must not rely on it. No memory or zero bytes: EINVAL; a closed arena's memory:
     * EFAULT; a confined arena's memory: EINVAL (the device uses the region from other threads); a
     * read-only segment with LOCAL_WRITE: EACCES.
     *
     * <p>The memory must outlive the registration: deregister ({@link MemoryRegion#close()}) before
     * closing the arena. If the arena closes first, the registration ends with it, on every provider:
     * the native provider deregisters the region as the arena closes, before the memory is freed, so
     * the kernel does not keep freed pages pinned for a peer's WRITE; afterwards every access through
     * the region's keys fails as with a bad key (a local one LOC_PROT_ERR, a peer's REM_ACCESS_ERR), the
     * region can only be closed, and its close still releases the PD. Memory that is never freed while
     * referenced (global, automatic, a direct {@code ByteBuffer}) stays alive while the region does.
     */
    MemoryRegion regMr(MemorySegment segment, int access);

    /** {@code ibv_alloc_mw}; type 1 or 2. */
    MemoryWindow allocMw(MwType type);

    /** {@code ibv_alloc_mw} with the raw type value: 3 or anything else fails with EINVAL. */
    MemoryWindow allocMw(int type);

    /** {@code ibv_create_qp}; the QP starts in RESET. Caps above the device limits: EINVAL. */
    QueuePair createQp(QpInitAttr attr);

    /**
     * The guided way to a working queue pair: a {@link QueuePairBuilder} for a QP of {@code type} in
     * this PD whose sends and receives complete on {@code cq}. Every setting has a default that makes a
     * fast, working pair.
     * {@snippet :
     * PreparedQueuePair prepared = pd.queuePair(QpType.RC, cq).prepare();   // created, in INIT
     * // exchange prepared.endpoint() with the peer out of band
     * QueuePair qp = prepared.handshake(remoteEndpoint);                  // in RTS
     * }
     */
    default QueuePairBuilder queuePair(QpType type, CompletionQueue cq) {
        return new QueuePairBuilder(this, type, cq, cq);
    }

    /** {@code ibv_create_srq}. */
    SharedReceiveQueue createSrq(SrqAttr attr);

    /** {@code ibv_create_ah}; on RoCE a GRH is required (EINVAL without). */
    AddressHandle createAh(AhAttr attr);

    /**
     * {@code ibv_create_ah_from_wc}: an address handle back to the sender of a UD receive, from its
     * work completion and the 40-byte GRH area it arrived with ({@link AhAttr#fromWc} says how and with
     * which errors), through port {@code portNum}.
     */
    default AddressHandle createAhFromWc(WorkCompletion wc, MemorySegment grh, int portNum) {
        return createAh(AhAttr.fromWc(context(), portNum, wc, grh));
    }
}
