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
    ProtectionDomain pd();

    /** The registered memory. */
    MemorySegment segment();

    /** The region's start address, the address work requests use. */
    long address();

    long length();

    int lkey();

    int rkey();

    /** The {@link Access} bits. */
    int access();

    /**
     * {@code ibv_rereg_mr} changing the protection domain and/or the access rights (flags
     * {@link ReregFlag}); the keys stay the same.
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
     * cannot move a registration: EOPNOTSUPP (Linux rxe).
     */
    void rereg(int flags, ProtectionDomain newPd, MemorySegment newSegment, int newAccess);

    /** A slice of the registered memory. */
    default MemorySegment slice(long offset, long length) {
        return segment().asSlice(offset, length);
    }

    /** Flags of {@link #rereg}, mirroring {@code enum ibv_rereg_mr_flags}. */
    final class ReregFlag {
        public static final int CHANGE_TRANSLATION = 1;
        public static final int CHANGE_PD = 1 << 1;
        public static final int CHANGE_ACCESS = 1 << 2;

        private ReregFlag() {}
    }
}
