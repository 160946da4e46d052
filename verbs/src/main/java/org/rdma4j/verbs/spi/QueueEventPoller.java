// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;

/**
 * An {@link EventPoller} over sources whose events live in {@link EventQueue}s ({@link EventQueue.Owner}):
 * the queues signal the poller, which parks its thread in between. A provider whose events come from
 * file descriptors implements {@link EventPoller} with {@code poll(2)} instead. Thread safe as
 * {@link EventPoller} says.
 */
public final class QueueEventPoller implements EventPoller, EventQueue.Watcher {
    /** A poller with no sources; a provider's {@link Context#createEventPoller()} returns one. */
    public QueueEventPoller() {
    }

    /** The registered sources and their queues, index for index; replaced (never changed) under {@code this}. */
    private record Registered(VerbsResource[] sources, EventQueue<?>[] queues) {}

    private static final Registered NONE = new Registered(new VerbsResource[0], new EventQueue<?>[0]);
    private volatile Registered registered = NONE;
    // The result of the last poll; only the polling thread touches these.
    private VerbsResource[] ready = new VerbsResource[0];
    private int[] readyEvents = new int[0];
    private int readyCount;

    private final AtomicReference<Thread> poller = new AtomicReference<>();
    private volatile boolean signalled;
    private volatile boolean wakeupRequested;
    private volatile boolean closed;

    @Override
    public void add(CompletionChannel channel) {
        register(channel);
    }

    @Override
    public void add(Context context) {
        register(context);
    }

    private synchronized void register(VerbsResource source) {
        ensureOpen();
        if (!(source instanceof EventQueue.Owner owner)) {
            throw new VerbsException(Errno.EINVAL, source + " belongs to another provider");
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
        EventQueue<?> q = owner.eventQueue();
        VerbsResource[] s = Arrays.copyOf(r.sources, r.sources.length + 1);
        EventQueue<?>[] qs = Arrays.copyOf(r.queues, r.queues.length + 1);
        s[s.length - 1] = source;
        qs[qs.length - 1] = q;
        registered = new Registered(s, qs);
        q.addWatcher(this);
        eventQueueSignalled(); // it may be ready already: a poll in progress looks again
    }

    @Override
    public synchronized boolean remove(VerbsResource source) {
        Registered r = registered;
        VerbsResource[] s = r.sources;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == source) {
                r.queues[i].removeWatcher(this);
                registered = new Registered(without(s, i, new VerbsResource[s.length - 1]),
                        without(r.queues, i, new EventQueue<?>[s.length - 1]));
                return true;
            }
        }
        return false;
    }

    private static <T> T[] without(T[] from, int i, T[] to) {
        System.arraycopy(from, 0, to, 0, i);
        System.arraycopy(from, i + 1, to, i, from.length - i - 1);
        return to;
    }

    @Override
    public void wakeup() {
        wakeupRequested = true;
        eventQueueSignalled();
    }

    @Override
    public void eventQueueSignalled() {
        signalled = true;
        Thread t = poller.get();
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public int poll(long timeoutMs) throws InterruptedException {
        if (closed) {
            throw new VerbsException(Errno.EBADF, "event poller is closed");
        }
        Thread me = Thread.currentThread();
        if (!poller.compareAndSet(null, me)) {
            throw new VerbsException(Errno.EBUSY, "another thread is polling this event poller");
        }
        try {
            long deadline = System.nanoTime() + (timeoutMs > 0 ? TimeUnit.MILLISECONDS.toNanos(timeoutMs) : 0);
            while (true) {
                signalled = false;
                int n = scan();
                if (n > 0 || wakeupRequested) {
                    wakeupRequested = false;
                    return n;
                }
                if (closed) {
                    throw new VerbsException(Errno.EBADF, "event poller is closed");
                }
                long left = deadline - System.nanoTime();
                if (timeoutMs == 0 || (timeoutMs > 0 && left <= 0)) {
                    return 0;
                }
                if (!signalled) { // a signal after this check leaves an unpark permit: no lost wakeup
                    if (timeoutMs < 0) {
                        LockSupport.park(this);
                    } else {
                        LockSupport.parkNanos(this, left);
                    }
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        } finally {
            poller.set(null);
        }
    }

    /** Fills the ready list from the registered queues; drops closed sources. */
    private int scan() {
        Registered r = registered;
        VerbsResource[] s = r.sources;
        EventQueue<?>[] qs = r.queues;
        if (ready.length < s.length) {
            ready = new VerbsResource[s.length];
            readyEvents = new int[s.length];
        }
        int n = 0;
        for (int i = 0; i < s.length; i++) {
            if (qs[i].isClosed()) {
                ready[n] = s[i];
                readyEvents[n++] = CLOSED;
                remove(s[i]);
            } else if (qs[i].hasEvent()) {
                ready[n] = s[i];
                readyEvents[n++] = IN;
            }
        }
        for (int i = n; i < readyCount; i++) {
            ready[i] = null; // do not keep sources of earlier polls alive
        }
        readyCount = n;
        return n;
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

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("event poller is closed");
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (EventQueue<?> q : registered.queues) {
            q.removeWatcher(this);
        }
        registered = NONE;
        eventQueueSignalled();
    }

    @Override
    public String toString() {
        return "event poller (" + registered.sources.length + " sources)" + (closed ? " (closed)" : "");
    }
}
