// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.ffm.ErrnoCapture;

/** Small helpers for calling libibverbs: errors, C strings, raw pointers. */
final class Native {
    private Native() {}

    /**
     * The exception for a failed verb: {@code rc} when it is a positive errno (most verbs return it),
     * else errno as the call left it (verbs that return -1 or NULL), EIO when neither says.
     */
    static VerbsException fail(int rc, ErrnoCapture errno, String what) {
        int e = rc > 0 ? rc : errno.errno();
        if (e <= 0) {
            e = Errno.EIO;
        }
        return new VerbsException(e, what + " failed: " + Errno.name(e));
    }

    /** A NUL-terminated C string at {@code p} (at most {@code max} bytes). */
    @SuppressWarnings("restricted")
    static String string(MemorySegment p, long max) {
        return p.equals(MemorySegment.NULL) ? "" : p.reinterpret(max).getString(0);
    }

    /** {@code p} as a segment of {@code size} bytes (a native object libibverbs allocated). */
    @SuppressWarnings("restricted")
    static MemorySegment at(MemorySegment p, long size) {
        return p.reinterpret(size);
    }

    static AssertionError unexpected(Throwable t) {
        return new AssertionError("unexpected failure of a downcall", t);
    }
}
