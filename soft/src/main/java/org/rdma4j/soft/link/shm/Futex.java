// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.rdma4j.verbs.spi.ffm.NativeLibrary;

/**
 * Linux futex(2) on a word of a shared file mapping, through {@code syscall(2)}: a thread of one
 * process sleeps on the word and a thread of another wakes it with one system call (no socket, no
 * selector). The shared-memory link's consumer sleeps here; its producers wake it
 * (docs/decisions/0021-shm-receive-agent-sleeps-on-a-futex.md). The process-shared form (no
 * FUTEX_PRIVATE_FLAG): the kernel keys the word by file and offset, so both mappings name the same
 * futex. Linux x86-64/aarch64 only; check {@link #isAvailable()}. Thread safe (stateless).
 */
final class Futex {
    private static final int FUTEX_WAIT = 0;
    private static final int FUTEX_WAKE = 1;
    static final int EAGAIN = 11;
    static final int ETIMEDOUT = 110;
    /** struct timespec: tv_sec, tv_nsec (LP64). */
    static final long TIMESPEC_BYTES = 16;

    private static final long SYS_FUTEX;
    private static final MethodHandle WAIT;
    /** FUTEX_WAKE never blocks: a critical downcall (no thread-state transition). */
    private static final MethodHandle WAKE;
    private static final Throwable UNAVAILABLE;
    private static final java.lang.invoke.VarHandle WORD = JAVA_INT.varHandle();

    static {
        String arch = System.getProperty("os.arch", "");
        long nr = arch.equals("amd64") ? 202 : arch.equals("aarch64") ? 98 : -1;
        MethodHandle wait = null;
        MethodHandle wake = null;
        Throwable cause = null;
        try {
            if (nr < 0) {
                throw new UnsupportedOperationException("no futex system call number for " + arch);
            }
            // long syscall(long nr, ...): nr fixed, then uaddr, op, val, timeout (variadic)
            FunctionDescriptor fd = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS);
            NativeLibrary libc = NativeLibrary.libc();
            // no errno capture: the JDK slices its capture segment per call (40 B that C2 does not always
            // remove), and the word itself says whether the sleep ended because it changed
            wait = libc.downcall("syscall", fd, Linker.Option.firstVariadicArg(1));
            wake = libc.downcall("syscall", fd, Linker.Option.firstVariadicArg(1), Linker.Option.critical(false));
        } catch (RuntimeException | LinkageError e) {
            cause = e;
            wait = null;
            wake = null;
        }
        SYS_FUTEX = nr;
        WAIT = wait;
        WAKE = wake;
        UNAVAILABLE = cause;
    }

    private Futex() {}

    /** Whether futex calls work here (else the link falls back to a doorbell datagram). */
    static boolean isAvailable() {
        return UNAVAILABLE == null;
    }

    /** Why {@link #isAvailable()} is false; null if it is true. */
    static Throwable unavailabilityCause() {
        return UNAVAILABLE;
    }

    /**
     * Sleeps while the int at {@code word} (4-byte aligned, in a shared mapping) holds {@code expected},
     * at most {@code timeoutNs}, using the caller's {@code timespec} ({@link #TIMESPEC_BYTES}). Returns 0
     * when a FUTEX_WAKE ended the sleep; -{@link #EAGAIN} when the call failed and the word no longer
     * holds {@code expected} (it changed before or during the sleep); else -{@link #ETIMEDOUT} (the
     * timeout passed, or a signal ended the sleep). The word is read instead of errno (no capture, no
     * allocation); the caller looks again in every case. Never throws for those.
     */
    static int await(MemorySegment word, int expected, long timeoutNs, MemorySegment timespec) {
        long ns = Math.max(timeoutNs, 0);
        timespec.set(JAVA_LONG, 0, ns / 1_000_000_000L);
        timespec.set(JAVA_LONG, 8, ns % 1_000_000_000L);
        long r;
        try {
            r = (long) WAIT.invokeExact(SYS_FUTEX, word, FUTEX_WAIT, expected, timespec);
        } catch (Throwable t) {
            throw new IllegalStateException("futex wait", t);
        }
        if (r == 0) {
            return 0;
        }
        return (int) WORD.getVolatile(word, 0L) != expected ? -EAGAIN : -ETIMEDOUT;
    }

    /** Wakes up to {@code count} threads sleeping on {@code word}; how many it woke (or -1). */
    static int wake(MemorySegment word, int count) {
        try {
            return (int) (long) WAKE.invokeExact(SYS_FUTEX, word, FUTEX_WAKE, count, MemorySegment.NULL);
        } catch (Throwable t) {
            throw new IllegalStateException("futex wake", t);
        }
    }
}
