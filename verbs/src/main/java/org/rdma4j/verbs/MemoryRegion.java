// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.lang.foreign.MemorySegment;

/**
 * A registered memory region ({@code struct ibv_mr}). {@link #close()} deregisters it; that fails with
 * EBUSY only while a memory window is bound to it (as rxe_dereg_mr). Posted work requests do not hold
 * it: one that runs after the deregistration fails as with a bad lkey and never touches the memory.
 * Thread safe.
 */
public interface MemoryRegion extends VerbsResource {
    /**
     * The protection domain the region is registered in ({@code ibv_mr.pd}); changes with a
     * {@link ReregFlag#CHANGE_PD} re-registration.
     *
     * @return the PD
     */
    ProtectionDomain pd();

    /**
     * The registered memory.
     *
     * @return the segment given to {@link ProtectionDomain#regMr} (or to the last re-registration that
     *     changed the translation)
     */
    MemorySegment segment();

    /**
     * {@code ibv_mr.addr}: the region's start address, the address work requests and peers use
     * (the segment's native address; rdma4j registers no zero-based regions).
     *
     * @return the virtual address of the first byte
     */
    long address();

    /**
     * {@code ibv_mr.length}.
     *
     * @return the length in bytes
     */
    long length();

    /**
     * {@code ibv_mr.lkey}: the key local work requests name the memory with ({@link ScatterGatherList}).
     *
     * @return the 32-bit local key
     */
    int lkey();

    /**
     * {@code ibv_mr.rkey}: the key a peer names the memory with in RDMA READ, WRITE and atomics; only
     * meaningful with remote {@link Access} bits.
     *
     * @return the 32-bit remote key
     */
    int rkey();

    /**
     * The access rights the region was registered (or last re-registered) with.
     *
     * @return the {@link Access} bits
     */
    int access();

    /**
     * {@code ibv_rereg_mr} changing the protection domain and/or the access rights, keeping the
     * memory: {@link #rereg(int, ProtectionDomain, MemorySegment, int)} without a new segment (S-MR-3).
     *
     * @param flags     {@link ReregFlag#CHANGE_PD} and/or {@link ReregFlag#CHANGE_ACCESS}
     * @param newPd     the new PD (read with CHANGE_PD), of the same context
     * @param newAccess the new {@link Access} bits (read with CHANGE_ACCESS)
     * @throws VerbsException as for {@link #rereg(int, ProtectionDomain, MemorySegment, int)}
     */
    default void rereg(int flags, ProtectionDomain newPd, int newAccess) {
        rereg(flags, newPd, null, newAccess);
    }

    /**
     * {@code ibv_rereg_mr}: with {@link ReregFlag#CHANGE_TRANSLATION} the region covers
     * {@code newSegment} from then on ({@link #segment()}, {@link #address()}, {@link #length()} follow);
     * {@code newPd} and {@code newAccess} apply with {@link ReregFlag#CHANGE_PD} and
     * {@link ReregFlag#CHANGE_ACCESS}. A provider may hand out new keys (the C API allows it): read
     * {@link #lkey()} and {@link #rkey()} again. EBUSY while a window is bound to the region; posted
     * work requests that run afterwards use the region as it is then; EINVAL for unknown or no flags; the
     * checks of {@code regMr} for the new memory (EINVAL for none or a heap segment, EFAULT if its arena
     * is closed). A provider that
     * cannot move a registration: EOPNOTSUPP (Linux rxe). On the native provider a re-registration the
     * kernel refuses for a reason other than its input may leave the region unusable: close it then.
     *
     * @param flags      {@link ReregFlag} bits, at least one
     * @param newPd      the new PD (read with CHANGE_PD), of the same context
     * @param newSegment the new memory (read with CHANGE_TRANSLATION), native memory as for
     *                   {@link ProtectionDomain#regMr}
     * @param newAccess  the new {@link Access} bits (read with CHANGE_ACCESS); remote write or atomic
     *                   without local write is EINVAL (S-MR-1)
     * @throws VerbsException EINVAL, EBUSY, EFAULT or EOPNOTSUPP as described; a refused call leaves
     *     the region as it was (S-MR-5)
     */
    void rereg(int flags, ProtectionDomain newPd, MemorySegment newSegment, int newAccess);

    /**
     * A slice of the registered memory, for filling or reading a buffer by offset.
     *
     * @param offset the offset from the start of the region, in bytes
     * @param length the slice's length in bytes
     * @return {@code segment().asSlice(offset, length)}
     * @throws IndexOutOfBoundsException if the slice is not inside the region
     */
    default MemorySegment slice(long offset, long length) {
        return segment().asSlice(offset, length);
    }

    /** Flags of {@link #rereg}, mirroring {@code enum ibv_rereg_mr_flags}. */
    final class ReregFlag {
        /** {@code IBV_REREG_MR_CHANGE_TRANSLATION}: register new memory under the region. */
        public static final int CHANGE_TRANSLATION = 1;
        /** {@code IBV_REREG_MR_CHANGE_PD}: move the region to another PD. */
        public static final int CHANGE_PD = 1 << 1;
        /** {@code IBV_REREG_MR_CHANGE_ACCESS}: change the access rights. */
        public static final int CHANGE_ACCESS = 1 << 2;

        private ReregFlag() {}
    }
}
