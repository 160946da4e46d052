// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A verbs call failed. Carries the errno a C program would have received from the same libibverbs
 * call (for example {@link Errno#EINVAL} for a bad QP attribute mask, {@link Errno#EBUSY} for
 * deallocating a PD that still has children).
 */
public class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /** The errno value (serialised). */
    private final int errno;

    /**
     * An exception whose message is the errno's name, a colon and {@code message}.
     *
     * @param errno   the errno value ({@link Errno})
     * @param message what failed, in words: the call, the object and the reason
     */
    public VerbsException(int errno, String message) {
        super(Errno.name(errno) + ": " + message);
        this.errno = errno;
    }

    /**
     * As {@link #VerbsException(int, String)}, with the {@code cause} (e.g. why a provider cannot load).
     *
     * @param errno   the errno value ({@link Errno})
     * @param message what failed, in words
     * @param cause   the underlying failure
     */
    public VerbsException(int errno, String message, Throwable cause) {
        super(Errno.name(errno) + ": " + message, cause);
        this.errno = errno;
    }

    /**
     * The errno value; compare with the constants of {@link Errno}.
     *
     * @return the errno, e.g. 22 for EINVAL
     */
    public int errno() {
        return errno;
    }

    /**
     * Throws a {@code VerbsException} with {@code errno} when {@code errno != 0}, for a provider that
     * turns a C return code into an exception.
     *
     * @param errno 0 for success, else the errno
     * @param what  the message of the exception
     * @throws VerbsException when {@code errno != 0}
     */
    public static void check(int errno, String what) {
        if (errno != 0) {
            throw new VerbsException(errno, what);
        }
    }
}
