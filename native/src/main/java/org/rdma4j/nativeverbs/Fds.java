// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.nativeverbs.abi.DeviceConstants;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.nativeverbs.abi.Ibv;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.ffm.ErrnoCapture;

/** The libc calls on file descriptors the event sources make: poll(2), eventfd, fcntl. */
final class Fds {
    static final long POLLFD_SIZE = DeviceLayouts.pollfd.byteSize();
    private static final long FD = 0;
    private static final long EVENTS = DeviceLayouts.pollfd.byteOffset(
            java.lang.foreign.MemoryLayout.PathElement.groupElement("events"));
    private static final long REVENTS = DeviceLayouts.pollfd.byteOffset(
            java.lang.foreign.MemoryLayout.PathElement.groupElement("revents"));
    /** The longest single poll(2): a waiter looks at its interrupt status at least this often. */
    static final int SLICE_MS = 100;
    private static final ThreadLocal<MemorySegment> EIGHT_BYTES =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(8));

    private Fds() {}

    static void set(MemorySegment pollfds, int i, int fd) {
        pollfds.set(ValueLayout.JAVA_INT, i * POLLFD_SIZE + FD, fd);
        pollfds.set(ValueLayout.JAVA_SHORT, i * POLLFD_SIZE + EVENTS, (short) DeviceConstants.POLLIN);
        pollfds.set(ValueLayout.JAVA_SHORT, i * POLLFD_SIZE + REVENTS, (short) 0);
    }

    static int revents(MemorySegment pollfds, int i) {
        return pollfds.get(ValueLayout.JAVA_SHORT, i * POLLFD_SIZE + REVENTS) & 0xffff;
    }

    /** poll(2) on the first {@code n} entries; returns the count, 0 on timeout or EINTR. */
    static int poll(MemorySegment pollfds, int n, int timeoutMs) {
        ErrnoCapture errno = ErrnoCapture.perThread();
        int r;
        try { // called directly (no lambda): a poll allocates nothing
            r = (int) Ibv.poll.invokeExact(errno.segment(), pollfds, (long) n, timeoutMs);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        if (r < 0) {
            if (errno.errno() == 4) { // EINTR
                return 0;
            }
            throw new VerbsException(errno.errno(), "poll(2) failed");
        }
        return r;
    }

    /** How long the next poll slice may be, for a wait that ends at {@code deadline} (negative timeout: none). */
    static int slice(long timeoutMs, long deadlineNanos) {
        if (timeoutMs < 0) {
            return SLICE_MS;
        }
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
            return 0;
        }
        return (int) Math.min(SLICE_MS, (left + 999_999) / 1_000_000);
    }

    static int eventfd() {
        int fd = Downcalls.status(e -> (int) Ibv.eventfd.invokeExact(e, 0,
                DeviceConstants.EFD_CLOEXEC | DeviceConstants.EFD_NONBLOCK));
        if (fd < 0) {
            throw new VerbsException(ErrnoCapture.perThread().errno(), "eventfd failed");
        }
        return fd;
    }

    /** Makes the eventfd readable (adds 1 to its counter). */
    static void signal(int eventFd) {
        MemorySegment one = EIGHT_BYTES.get();
        one.set(ValueLayout.JAVA_LONG, 0, 1L);
        try {
            long unused = (long) Ibv.write.invokeExact(ErrnoCapture.perThread().segment(), eventFd, one, 8L);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Reads an eventfd's counter back to zero (it is non-blocking: no wait when it is zero). */
    static void drain(int eventFd) {
        try {
            long unused = (long) Ibv.read.invokeExact(ErrnoCapture.perThread().segment(), eventFd,
                    EIGHT_BYTES.get(), 8L);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void close(int fd) {
        Downcalls.status(e -> (int) Ibv.close.invokeExact(e, fd));
    }

    /** Sets O_NONBLOCK, so reading an event never waits (waits are poll(2)'s, bounded). */
    static void nonBlocking(int fd, String what) {
        int flags = Downcalls.status(e -> (int) Ibv.fcntl.invokeExact(e, fd, DeviceConstants.F_GETFL, 0));
        if (flags < 0 || Downcalls.status(e -> (int) Ibv.fcntl.invokeExact(e, fd, DeviceConstants.F_SETFL,
                flags | DeviceConstants.O_NONBLOCK)) < 0) {
            throw new VerbsException(ErrnoCapture.perThread().errno(), "fcntl(O_NONBLOCK) on the fd of " + what
                    + " failed");
        }
    }

    static VerbsException closed(String what) {
        return new VerbsException(Errno.EBADF, what + " is closed");
    }
}
