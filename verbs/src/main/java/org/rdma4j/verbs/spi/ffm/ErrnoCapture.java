// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * Where a downcall made by {@link NativeLibrary#downcallWithErrno} leaves errno: pass {@link #segment()}
 * as the handle's first argument, then read {@link #errno()} if the call reported failure. Create one
 * per thread (or per caller that runs on one thread at a time) and reuse it: a call through it
 * allocates nothing. Not thread safe.
 *
 * {@snippet :
 * ErrnoCapture errno = new ErrnoCapture();          // once, kept by the calling thread
 * int r = (int) CLOSE.invokeExact(errno.segment(), fd);
 * if (r < 0) {
 *     return -errno.errno();                        // e.g. -EBADF
 * }
 * }
 */
public final class ErrnoCapture {
    /** The layout {@code Linker.Option.captureCallState} writes (errno and, on Windows, more). */
    static final StructLayout LAYOUT = Linker.Option.captureStateLayout();

    private static final VarHandle ERRNO = LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final ThreadLocal<ErrnoCapture> PER_THREAD = ThreadLocal.withInitial(ErrnoCapture::new);

    private final MemorySegment segment = Arena.ofAuto().allocate(LAYOUT);

    /** A new capture state, freed when it is no longer reachable. */
    public ErrnoCapture() {}

    /**
     * The calling thread's own capture state, for control-path callers that do not keep one: created on
     * the thread's first call, then the same object (no allocation) on every later call.
     *
     * @return the calling thread's capture state
     */
    public static ErrnoCapture perThread() {
        return PER_THREAD.get();
    }

    /** {@return the native memory to pass as the first argument of a downcall made with errno capture} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return errno as the last call through {@link #segment()} left it; meaningful only if that call failed} */
    public int errno() {
        return (int) ERRNO.get(segment, 0L);
    }
}
