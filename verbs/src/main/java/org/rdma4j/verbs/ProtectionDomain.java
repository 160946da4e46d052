// SPDX-License-Identifier: Apache-2.0
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
     * software device must not rely on it. No memory: EINVAL; a closed arena's memory: EFAULT.
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
