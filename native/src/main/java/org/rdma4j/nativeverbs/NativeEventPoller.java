// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractEventPoller;

/**
 * An {@link EventPoller} over native channels and contexts: one poll(2) on each source's fd and
 * close-eventfd plus this poller's own wakeup eventfd. Registration builds a new immutable snapshot;
 * {@link #poll} reuses its pollfd array, so a reused poller allocates nothing per poll. Thread safe as
 * {@link EventPoller} says.
 */
final class NativeEventPoller extends AbstractEventPoller<EventSource> {
    private final int wakeFd = Fds.eventfd();
    private volatile boolean wakeupRequested;
    private boolean released;
    // only the polling thread touches these
    private MemorySegment pollfds = MemorySegment.NULL;
    private boolean[] entered = new boolean[0];

    @Override
    public void add(CompletionChannel channel) {
        if (!(channel instanceof NativeCompletionChannel c)) {
            throw new VerbsException(Errno.EINVAL, channel + " belongs to another provider");
        }
        register(c, c.source());
    }

    @Override
    public void add(Context context) {
        if (!(context instanceof NativeContext c)) {
            throw new VerbsException(Errno.EINVAL, context + " belongs to another provider");
        }
        register(c, c.asyncSource());
    }

    @Override
    protected void registered(EventSource fds) {
        Fds.signal(wakeFd); // a poll in progress takes the new source in
    }

    @Override
    public void wakeup() {
        if (!isClosed()) {
            wakeupRequested = true;
            Fds.signal(wakeFd);
        }
    }

    @Override
    public int poll(long timeoutMs) throws InterruptedException {
        enterPoll();
        try {
            if (isClosed()) {
                throw closedError();
            }
            long deadline = EventSource.deadline(timeoutMs);
            while (true) {
                Sources<EventSource> r = sources();
                int n = r.size();
                ensureCapacity(n);
                int count = 0;
                Fds.set(pollfds, 0, wakeFd);
                for (int i = 0; i < n; i++) {
                    EventSource fds = r.detail(i);
                    entered[i] = fds.enter();
                    if (!entered[i]) {
                        count = report(count, r.source(i), CLOSED);
                    }
                    Fds.set(pollfds, 1 + 2 * i, entered[i] ? fds.fd : -1);
                    Fds.set(pollfds, 2 + 2 * i, entered[i] ? fds.closeFd : -1);
                }
                int slice = count > 0 ? 0 : Fds.slice(timeoutMs, deadline);
                boolean woken;
                try {
                    Fds.poll(pollfds, 1 + 2 * n, slice);
                    woken = Fds.revents(pollfds, 0) != 0;
                    for (int i = 0; i < n; i++) {
                        if (!entered[i]) {
                            continue;
                        }
                        if (Fds.revents(pollfds, 2 + 2 * i) != 0 || r.detail(i).isClosing()) {
                            count = report(count, r.source(i), CLOSED);
                        } else if (Fds.revents(pollfds, 1 + 2 * i) != 0) {
                            count = report(count, r.source(i), IN);
                        }
                    }
                } finally {
                    for (int i = 0; i < n; i++) {
                        if (entered[i]) {
                            r.detail(i).exit();
                        }
                    }
                }
                if (woken) {
                    Fds.drain(wakeFd); // a wakeup() or a source added: look again unless wakeup() asked
                    woken = wakeupRequested;
                    wakeupRequested = false;
                }
                if (isClosed()) {
                    throw closedError();
                }
                if (count > 0 || woken || slice == 0) {
                    readyCount(count); // drops the sources reported CLOSED
                    return count;
                }
                if (Thread.interrupted()) {
                    readyCount(0);
                    throw new InterruptedException();
                }
            }
        } finally {
            leavePoll();
        }
    }

    private void ensureCapacity(int n) {
        if (entered.length < n || pollfds.byteSize() < (1 + 2L * n) * Fds.POLLFD_SIZE) {
            int cap = Math.max(4, Math.max(n, entered.length * 2));
            pollfds = Arena.ofAuto().allocate((1 + 2L * cap) * Fds.POLLFD_SIZE, 8);
            entered = new boolean[cap];
            readyCapacity(cap);
        }
    }

    /** Wakes a poll in progress (it throws EBADF), waits for it to leave, then closes the wakeup eventfd. */
    @Override
    protected void closing() {
        Fds.signal(wakeFd);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (pollingThread() != null && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            Thread.yield();
        }
        forgetSources();
        if (!released && pollingThread() == null) {
            released = true;
            Fds.close(wakeFd);
        }
    }

    @Override
    public String toString() {
        return "native event poller (" + sources().size() + " sources)" + (isClosed() ? " (closed)" : "");
    }
}
