// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A verbs call failed. Carries the errno a C program would have received from the same libibverbs
 * call (for example {@link Errno#EINVAL} for a bad QP attribute mask, {@link Errno#EBUSY} for
 * deallocating a PD that still has children).
 */
public class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int errno;

    public VerbsException(int errno, String message) {
        super(Errno.name(errno) + ": " + message);
        this.errno = errno;
    }

    /** As {@link #VerbsException(int, String)}, with the {@code cause} (e.g. why a provider cannot load). */
    public VerbsException(int errno, String message, Throwable cause) {
        super(Errno.name(errno) + ": " + message, cause);
        this.errno = errno;
    }

    /** The errno value, e.g. 22 for EINVAL. */
    public int errno() {
        return errno;
    }

    /** Throws a {@code VerbsException} with {@code errno} when {@code errno != 0}. */
    public static void check(int errno, String what) {
        if (errno != 0) {
            throw new VerbsException(errno, what);
        }
    }
}
