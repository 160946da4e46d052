// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The file descriptor behind a completion channel ({@code channel->fd}) or a context's asynchronous
 * events ({@code async_fd}), made non-blocking, with what lets closing wake whoever waits on it: an
 * eventfd polled next to it, written on {@link #shutdown}. Waiters and pollers {@link #enter} before
 * polling and {@link #exit} after; {@link #shutdown} waits for them to leave, so the descriptors are
 * never closed (and their numbers reused) under a poll. Thread safe.
 */
final class EventSource {
    /** How long shutdown waits for pollers to leave (they wake at once: this bounds a bug, not a wait). */
    private static final long LEAVE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final ThreadLocal<MemorySegment> TWO_POLLFDS =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(2 * Fds.POLLFD_SIZE, 8));

    final int fd;
    final int closeFd;
    private final String what;
    private final AtomicInteger users = new AtomicInteger();
    private volatile boolean closing;

    EventSource(int fd, String what) {
        this.what = what;
        Fds.nonBlocking(fd, what);
        this.fd = fd;
        this.closeFd = Fds.eventfd();
    }

    boolean enter() {
        users.incrementAndGet();
        if (closing) {
            users.decrementAndGet();
            return false;
        }
        return true;
    }

    void exit() {
        users.decrementAndGet();
    }

    boolean isClosing() {
        return closing;
    }

    /**
     * Waits until the fd is readable: true when it is, false after {@code timeoutMs} (0 = do not wait,
     * negative = no limit). The caller has {@link #enter}ed.
     *
     * @throws org.rdma4j.verbs.VerbsException EBADF once shut down
     */
    boolean await(long timeoutMs, long deadlineNanos) throws InterruptedException {
        MemorySegment pfds = TWO_POLLFDS.get();
        while (true) {
            if (closing) {
                throw Fds.closed(what);
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            int slice = Fds.slice(timeoutMs, deadlineNanos);
            Fds.set(pfds, 0, fd);
            Fds.set(pfds, 1, closeFd);
            int n = Fds.poll(pfds, 2, slice);
            if (Fds.revents(pfds, 1) != 0 || closing) {
                throw Fds.closed(what);
            }
            if (n > 0 && Fds.revents(pfds, 0) != 0) {
                return true;
            }
            if (slice == 0) {
                return false;
            }
        }
    }

    /** True when an event is queued; false once shut down. */
    boolean ready() {
        if (!enter()) {
            return false;
        }
        try {
            MemorySegment pfds = TWO_POLLFDS.get();
            Fds.set(pfds, 0, fd);
            return Fds.poll(pfds, 1, 0) > 0 && (Fds.revents(pfds, 0) & 1) != 0;
        } finally {
            exit();
        }
    }

    /** Wakes every waiter and poller (they see EBADF / CLOSED) and waits until they have left. */
    void shutdown() {
        closing = true;
        Fds.signal(closeFd);
        long deadline = System.nanoTime() + LEAVE_TIMEOUT_NANOS;
        while (users.get() > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /** After the native object (which owns {@link #fd}) is destroyed: closes the eventfd. */
    void release() {
        Fds.close(closeFd);
    }

    static long deadline(long timeoutMs) {
        return System.nanoTime() + (timeoutMs > 0 ? TimeUnit.MILLISECONDS.toNanos(timeoutMs) : 0);
    }
}
