// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;

/**
 * An {@link EventPoller} over native channels and contexts: one poll(2) on each source's fd and
 * close-eventfd plus this poller's own wakeup eventfd. Registration builds a new immutable snapshot;
 * {@link #poll} reuses its pollfd array, so a reused poller allocates nothing per poll. Thread safe as
 * {@link EventPoller} says.
 */
final class NativeEventPoller implements EventPoller {
    private record Registered(VerbsResource[] sources, EventSource[] fds) {}

    private static final Registered NONE = new Registered(new VerbsResource[0], new EventSource[0]);

    private final int wakeFd = Fds.eventfd();
    private volatile Registered registered = NONE;
    private final AtomicReference<Thread> poller = new AtomicReference<>();
    private volatile boolean closed;
    private volatile boolean wakeupRequested;
    private boolean released;
    // only the polling thread touches these
    private MemorySegment pollfds = MemorySegment.NULL;
    private VerbsResource[] ready = new VerbsResource[0];
    private int[] readyEvents = new int[0];
    private int readyCount;
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

    private synchronized void register(VerbsResource source, EventSource fds) {
        if (closed) {
            throw new IllegalStateException("event poller is closed");
        }
        if (source.isClosed()) {
            throw new IllegalStateException(source + " is closed");
        }
        Registered r = registered;
        for (VerbsResource s : r.sources) {
            if (s == source) {
                throw new VerbsException(Errno.EEXIST, source + " is already registered");
            }
        }
        VerbsResource[] s = Arrays.copyOf(r.sources, r.sources.length + 1);
        EventSource[] f = Arrays.copyOf(r.fds, r.fds.length + 1);
        s[s.length - 1] = source;
        f[f.length - 1] = fds;
        registered = new Registered(s, f);
        Fds.signal(wakeFd); // a poll in progress takes the new source in
    }

    @Override
    public synchronized boolean remove(VerbsResource source) {
        Registered r = registered;
        for (int i = 0; i < r.sources.length; i++) {
            if (r.sources[i] == source) {
                VerbsResource[] s = new VerbsResource[r.sources.length - 1];
                EventSource[] f = new EventSource[s.length];
                System.arraycopy(r.sources, 0, s, 0, i);
                System.arraycopy(r.sources, i + 1, s, i, s.length - i);
                System.arraycopy(r.fds, 0, f, 0, i);
                System.arraycopy(r.fds, i + 1, f, i, s.length - i);
                registered = new Registered(s, f);
                return true;
            }
        }
        return false;
    }

    @Override
    public void wakeup() {
        if (!closed) {
            wakeupRequested = true;
            Fds.signal(wakeFd);
        }
    }

    @Override
    public int poll(long timeoutMs) throws InterruptedException {
        if (closed) {
            throw Fds.closed("event poller");
        }
        if (!poller.compareAndSet(null, Thread.currentThread())) {
            throw new VerbsException(Errno.EBUSY, "another thread is polling this event poller");
        }
        try {
            if (closed) {
                throw Fds.closed("event poller");
            }
            long deadline = EventSource.deadline(timeoutMs);
            while (true) {
                Registered r = registered;
                int n = r.sources.length;
                ensureCapacity(n);
                int count = 0;
                Fds.set(pollfds, 0, wakeFd);
                for (int i = 0; i < n; i++) {
                    entered[i] = r.fds[i].enter();
                    if (!entered[i]) {
                        count = report(count, r.sources[i], CLOSED);
                    }
                    Fds.set(pollfds, 1 + 2 * i, entered[i] ? r.fds[i].fd : -1);
                    Fds.set(pollfds, 2 + 2 * i, entered[i] ? r.fds[i].closeFd : -1);
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
                        if (Fds.revents(pollfds, 2 + 2 * i) != 0 || r.fds[i].isClosing()) {
                            count = report(count, r.sources[i], CLOSED);
                        } else if (Fds.revents(pollfds, 1 + 2 * i) != 0) {
                            count = report(count, r.sources[i], IN);
                        }
                    }
                } finally {
                    for (int i = 0; i < n; i++) {
                        if (entered[i]) {
                            r.fds[i].exit();
                        }
                    }
                }
                for (int i = 0; i < count; i++) {
                    if (readyEvents[i] == CLOSED) {
                        remove(ready[i]);
                    }
                }
                if (woken) {
                    Fds.drain(wakeFd); // a wakeup() or a source added: look again unless wakeup() asked
                    woken = wakeupRequested;
                    wakeupRequested = false;
                }
                if (closed) {
                    throw Fds.closed("event poller");
                }
                if (count > 0 || woken || slice == 0) {
                    setReadyCount(count);
                    return count;
                }
                if (Thread.interrupted()) {
                    setReadyCount(0);
                    throw new InterruptedException();
                }
            }
        } finally {
            poller.set(null);
        }
    }

    private int report(int count, VerbsResource source, int events) {
        ready[count] = source;
        readyEvents[count] = events;
        return count + 1;
    }

    private void setReadyCount(int n) {
        for (int i = n; i < readyCount; i++) {
            ready[i] = null; // do not keep sources of earlier polls alive
        }
        readyCount = n;
    }

    private void ensureCapacity(int n) {
        if (entered.length < n || pollfds.byteSize() < (1 + 2L * n) * Fds.POLLFD_SIZE) {
            int cap = Math.max(4, Math.max(n, entered.length * 2));
            pollfds = Arena.ofAuto().allocate((1 + 2L * cap) * Fds.POLLFD_SIZE, 8);
            entered = new boolean[cap];
            ready = Arrays.copyOf(ready, cap);
            readyEvents = Arrays.copyOf(readyEvents, cap);
        }
    }

    @Override
    public VerbsResource source(int i) {
        return ready[checkIndex(i)];
    }

    @Override
    public int events(int i) {
        return readyEvents[checkIndex(i)];
    }

    private int checkIndex(int i) {
        if (i < 0 || i >= readyCount) {
            throw new IndexOutOfBoundsException("index " + i + ", the last poll reported " + readyCount);
        }
        return i;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    /** Wakes a poll in progress (it throws EBADF), waits for it to leave, then closes the wakeup eventfd. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Fds.signal(wakeFd);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (poller.get() != null && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            Thread.yield();
        }
        registered = NONE;
        if (!released && poller.get() == null) {
            released = true;
            Fds.close(wakeFd);
        }
    }

    @Override
    public String toString() {
        return "native event poller (" + registered.sources.length + " sources)" + (closed ? " (closed)" : "");
    }
}
