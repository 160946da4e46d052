// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;

/** Small helpers for reading what libibverbs returns: C strings, raw pointers (errors: {@link Downcalls}). */
final class Native {
    private Native() {}

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
}

