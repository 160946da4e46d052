// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.lang.foreign.MemorySegment;

/**
 * A protection domain ({@code struct ibv_pd}): the scope of memory keys. A QP may use memory regions,
 * windows and address handles of its own PD only; an rkey of another PD is a remote access error
 * (S-ERR-1). {@link #close()} is {@code ibv_dealloc_pd} and fails with EBUSY while an MR, MW, QP, SRQ
 * or AH of the PD is open; the PD stays fully usable (S-PD-2). Thread safe.
 */
public interface ProtectionDomain extends VerbsResource {
    /**
     * The context the PD was allocated in ({@code ibv_pd.context}).
     *
     * @return the context
     */
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
     * read-only segment with LOCAL_WRITE: EACCES (S-MR-6).
     *
     * <p>The memory must outlive the registration: deregister ({@link MemoryRegion#close()}) before
     * closing the arena. If the arena closes first, the registration ends with it, on every provider
     * (S-MR-7): the native provider deregisters the region as the arena closes, before the memory is
     * freed, so the kernel does not keep freed pages pinned for a peer's WRITE; afterwards every access
     * through the region's keys fails as with a bad key (a local one LOC_PROT_ERR, a peer's
     * REM_ACCESS_ERR), the region can only be closed, and its close still releases the PD. Memory that is
     * never freed while referenced (global, automatic, a direct {@code ByteBuffer}) stays alive while the
     * region does. The hazard left: a memory window still bound to the region keeps it registered, and
     * closing the arena then throws.
     *
     * @param segment the memory to register
     * @param access  {@link Access} bits: what the local device and, through the rkey, remote peers may
     *                do with the memory
     * @return the region; close it ({@code ibv_dereg_mr}) before freeing the memory
     * @throws VerbsException EINVAL (no memory, zero bytes, a heap or confined-arena segment, unknown
     *     access bits, remote write or atomic without local write, S-MR-1, S-MR-5, S-MR-6), EFAULT (a
     *     closed arena's memory), EOPNOTSUPP (ZERO_BASED or ON_DEMAND on a device without them), EACCES
     *     (read-only memory with LOCAL_WRITE)
     */
    MemoryRegion regMr(MemorySegment segment, int access);

    /**
     * {@code ibv_alloc_mw}: a memory window of type 1 or 2 (S-MW-1).
     *
     * @param type the window type
     * @return the window, not yet bound; close it ({@code ibv_dealloc_mw}) to revoke any binding
     * @throws VerbsException EOPNOTSUPP on a native device without memory windows
     */
    MemoryWindow allocMw(MwType type);

    /**
     * {@code ibv_alloc_mw} with the raw {@code enum ibv_mw_type} value.
     *
     * @param type 1 or 2
     * @return the window
     * @throws VerbsException EINVAL for 3 or any other value (S-MW-2)
     */
    MemoryWindow allocMw(int type);

    /**
     * {@code ibv_create_qp}; the QP starts in RESET (S-QP-1). Prefer {@link #queuePair} to get a
     * connected QP without writing the state transitions.
     *
     * @param attr the type, CQs, SRQ, capacities and sq_sig_all; the CQs and SRQ must belong to this
     *             PD's context
     * @return the QP; its capacities ({@link QueuePair#cap()}) are at least those asked for
     * @throws VerbsException EINVAL for capacities above the device's ({@code max_qp_wr},
     *     {@code max_sge}, inline data, S-QP-1); past {@code max_qp} as for {@link Context#allocPd()}
     */
    QueuePair createQp(QpInitAttr attr);

    /**
     * The guided way to a working queue pair: a {@link QueuePairBuilder} for a QP of {@code type} in
     * this PD whose sends and receives complete on {@code cq}. Every setting has a default that makes a
     * fast, working pair. rdma4j's own (S-API-1).
     * {@snippet :
     * PreparedQueuePair prepared = pd.queuePair(QpType.RC, cq).prepare();   // created, in INIT
     * // exchange prepared.endpoint() with the peer out of band
     * QueuePair qp = prepared.handshake(remoteEndpoint);                  // in RTS
     * }
     *
     * @param type the QP type
     * @param cq   the CQ of both the send and the receive queue
     * @return a new builder
     */
    default QueuePairBuilder queuePair(QpType type, CompletionQueue cq) {
        return new QueuePairBuilder(this, type, cq, cq);
    }

    /**
     * {@code ibv_create_srq}: a shared receive queue (S-SRQ-1).
     *
     * @param attr {@link SrqAttr#maxWr()} receives of {@link SrqAttr#maxSge()} SGEs each, and the
     *             initial limit
     * @return the SRQ; close it ({@code ibv_destroy_srq}) after its QPs
     * @throws VerbsException EINVAL for sizes above the device's {@code max_srq_wr} or {@code max_srq_sge}
     */
    SharedReceiveQueue createSrq(SrqAttr attr);

    /**
     * {@code ibv_create_ah}: an address handle for UD sends.
     *
     * @param attr the address vector
     * @return the handle; close it ({@code ibv_destroy_ah}) when no posted send uses it any more
     * @throws VerbsException EINVAL on RoCE without a GRH (S-DEV-4), or for a bad port or GID index
     */
    AddressHandle createAh(AhAttr attr);

    /**
     * {@code ibv_create_ah_from_wc}: an address handle back to the sender of a UD receive, from its
     * work completion and the 40-byte GRH area it arrived with ({@link AhAttr#fromWc} says how and with
     * which errors), through port {@code portNum} (S-UD-4).
     *
     * @param wc      the receive's completion
     * @param grh     the first 40 bytes of the receive buffer
     * @param portNum the port the datagram arrived on
     * @return the handle
     * @throws VerbsException the errors of {@link AhAttr#fromWc} and {@link #createAh}
     */
    default AddressHandle createAhFromWc(WorkCompletion wc, MemorySegment grh, int portNum) {
        return createAh(AhAttr.fromWc(context(), portNum, wc, grh));
    }
}
