package org.rdma4j.verbs;

import java.lang.foreign.MemorySegment;

/**
 * A registered memory region ({@code struct ibv_mr}). {@link #close()} deregisters it; that fails with
 * EBUSY while a type-2 window is bound to it or an outstanding work request uses it. Thread safe.
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
    void rereg(int flags, ProtectionDomain newPd, int newAccess);

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
