// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;
import org.rdma4j.nativeverbs.abi.IbvQp;
import org.rdma4j.nativeverbs.abi.ProviderOps;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.ffm.ErrnoCapture;

/**
 * One downcall with errno capture, the check of what it returned and the exception it becomes: the
 * idiom of every control-path verb of this provider. The call gets the calling thread's capture state
 * ({@link ErrnoCapture#perThread()}), whose errno the checks read. Two wordings exist, as the verbs
 * have always reported them: {@link #check} / {@link #create} say "WHAT failed: ENAME"; {@link #checkAs}
 * / {@link #createAs} use the caller's whole message. The words are made only on failure (a supplier),
 * after the call, as each verb made them before. The data path (posts, polls) calls its handles
 * directly, allocation-free, and uses {@link #rethrow} and {@link #providerErrno} only. Stateless.
 */
final class Downcalls {
    private Downcalls() {}

    /** A downcall returning an int, given the segment of the thread's errno capture state. */
    @FunctionalInterface
    interface IntCall {
        int call(MemorySegment errno) throws Throwable;
    }

    /** A downcall returning a pointer, given the segment of the thread's errno capture state. */
    @FunctionalInterface
    interface AddressCall {
        MemorySegment call(MemorySegment errno) throws Throwable;
    }

    /** What a failed {@code invokeExact} of a downcall becomes: the downcall handles throw only unchecked errors. */
    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException("unexpected checked exception from a downcall", t);
    }

    /** Makes the call and returns what it returned; errno stays in {@link ErrnoCapture#perThread()}. */
    static int status(IntCall call) {
        try {
            return call.call(ErrnoCapture.perThread().segment());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Makes the call and returns the pointer it returned; errno stays in {@link ErrnoCapture#perThread()}. */
    static MemorySegment address(AddressCall call) {
        try {
            return call.call(ErrnoCapture.perThread().segment());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A verb that returns 0, or a positive errno or -1 with errno: anything but 0 is {@link #fail}. */
    static void check(Supplier<String> what, IntCall call) {
        int rc = status(call);
        if (rc != 0) {
            throw fail(rc, what.get());
        }
    }

    /** As {@link #check}, failing with {@link IbvQp#errnoOf} and {@code message} as it is. */
    static void checkAs(Supplier<String> message, IntCall call) {
        int ret = status(call);
        if (ret != 0) {
            throw failAs(ret, message.get());
        }
    }

    /** As {@link #checkAs}, running {@code undo} before the exception when the verb returned non-zero. */
    static void checkAs(Supplier<String> message, Runnable undo, IntCall call) {
        int ret = status(call);
        if (ret != 0) {
            undo.run();
            throw failAs(ret, message.get());
        }
    }

    /**
     * A provider's post op ({@code post_send}, {@code post_recv}, {@code post_srq_recv}) of the chain at
     * {@code head} to the queue at {@code queue}: 0, or an errno or its negative ({@link #providerErrno}),
     * with {@code *badWr} naming the refused request. Called directly: a post allocates nothing.
     */
    static int post(MemorySegment fn, long queue, long head, long badWr) {
        try {
            return (int) ProviderOps.POST.invokeExact(fn, queue, head, badWr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A verb that returns an object or NULL with errno: NULL runs {@code undo}, then is {@link #fail}. */
    static MemorySegment create(Supplier<String> what, Runnable undo, AddressCall call) {
        MemorySegment p = created(undo, call);
        if (p.equals(MemorySegment.NULL)) {
            undo.run();
            throw fail(0, what.get());
        }
        return p;
    }

    /** As {@link #create}, failing with errno as the call left it and {@code message} as it is. */
    static MemorySegment createAs(Supplier<String> message, Runnable undo, AddressCall call) {
        MemorySegment p = created(undo, call);
        if (p.address() == 0) {
            int e = ErrnoCapture.perThread().errno();
            undo.run();
            throw new VerbsException(e, message.get());
        }
        return p;
    }

    private static MemorySegment created(Runnable undo, AddressCall call) {
        try {
            return address(call);
        } catch (RuntimeException | Error e) {
            undo.run();
            throw e;
        }
    }

    /**
     * The exception for a failed verb: {@code rc} when it is a positive errno (most verbs return it),
     * else errno as the call left it (verbs that return -1 or NULL), EIO when neither says.
     */
    static VerbsException fail(int rc, String what) {
        int e = rc > 0 ? rc : ErrnoCapture.perThread().errno();
        if (e <= 0) {
            e = Errno.EIO;
        }
        return new VerbsException(e, what + " failed: " + Errno.name(e));
    }

    /** The exception for a verb that returned {@code ret}: {@link IbvQp#errnoOf} and {@code message}. */
    static VerbsException failAs(int ret, String message) {
        return new VerbsException(IbvQp.errnoOf(ret, ErrnoCapture.perThread().errno()), message);
    }

    /** The errno of a provider op's non-zero return ({@code post_send} and the like return it, or its negative). */
    static int providerErrno(int ret) {
        return ret < 0 ? -ret : ret;
    }
}
