// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * The event queue behind a completion channel or a context's asynchronous events, for providers that
 * keep their events in Java (the kernel's {@code ib_uverbs_event_queue}): bounded waits, a close that
 * wakes every waiter, removal of the events of a destroyed object, and {@link Watcher}s for
 * {@link QueueEventPoller}. Thread safe.
 *
 * @param <E> the event type (the CQ for completion events, the event record for async events)
 */
public final class EventQueue<E> {
    /** Told when an event is queued or the queue is closed (called without the queue's lock held). */
    public interface Watcher {
        void eventQueueSignalled();
    }

    /** A channel or context whose events live in an {@link EventQueue}: {@link QueueEventPoller} can wait on it. */
    public interface Owner {
        EventQueue<?> eventQueue();
    }

    private final String what;
    private final Predicate<? super E> accept;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private final ArrayDeque<E> events = new ArrayDeque<>();
    /** Copy-on-write, so signalling walks an array and allocates nothing. */
    private volatile Watcher[] watchers = new Watcher[0];
    private volatile boolean closed;

    /**
     * @param what   names the owner in the EBADF message, e.g. "completion channel"
     * @param accept decides, under the queue's lock, whether an offered event is still wanted (false for
     *               an event of an object being destroyed, so none slips in after {@link #purge})
     */
    public EventQueue(String what, Predicate<? super E> accept) {
        this.what = what;
        this.accept = accept;
    }

    /** Queues {@code e} and wakes a waiter; false (dropped) when closed or not accepted. */
    public boolean offer(E e) {
        lock.lock();
        try {
            if (closed || !accept.test(e)) {
                return false;
            }
            events.add(e);
            notEmpty.signal();
        } finally {
            lock.unlock();
        }
        signalWatchers();
        return true;
    }

    /**
     * The next event, waiting up to {@code timeoutMs} (0: do not wait; negative: until one comes);
     * null when none came in time. {@code onTake} (may be null) runs under the queue's lock with the
     * event taken, so counting deliveries is atomic with {@link #locked} checks. Throws
     * {@link VerbsException} EBADF once the queue is closed, including for callers that were waiting
     * when it closed.
     */
    public E take(long timeoutMs, Consumer<? super E> onTake) throws InterruptedException {
        long nanos = timeoutMs > 0 ? TimeUnit.MILLISECONDS.toNanos(timeoutMs) : 0;
        lock.lockInterruptibly();
        try {
            while (true) {
                if (closed) {
                    throw new VerbsException(Errno.EBADF, what + " is closed");
                }
                E e = events.poll();
                if (e != null) {
                    if (onTake != null) {
                        onTake.accept(e);
                    }
                    return e;
                }
                if (timeoutMs < 0) {
                    notEmpty.await();
                } else if (nanos <= 0) {
                    return null;
                } else {
                    nanos = notEmpty.awaitNanos(nanos);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** True while an event is queued (a take would not wait); false once closed. */
    public boolean hasEvent() {
        lock.lock();
        try {
            return !closed && !events.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /** Removes the queued events matching {@code match} (the events of a destroyed object); returns how many. */
    public int purge(Predicate<? super E> match) {
        lock.lock();
        try {
            int n = 0;
            for (Iterator<E> it = events.iterator(); it.hasNext(); ) {
                if (match.test(it.next())) {
                    it.remove();
                    n++;
                }
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code action} holding the queue's lock: no offer, take or purge happens meanwhile. */
    public <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    /** Drops every queued event and wakes every waiter and watcher; idempotent. */
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            events.clear();
            notEmpty.signalAll();
        } finally {
            lock.unlock();
        }
        signalWatchers();
    }

    public synchronized void addWatcher(Watcher w) {
        Watcher[] ws = watchers;
        for (Watcher x : ws) {
            if (x == w) {
                return;
            }
        }
        Watcher[] n = Arrays.copyOf(ws, ws.length + 1);
        n[ws.length] = w;
        watchers = n;
    }

    public synchronized void removeWatcher(Watcher w) {
        Watcher[] ws = watchers;
        for (int i = 0; i < ws.length; i++) {
            if (ws[i] == w) {
                Watcher[] n = new Watcher[ws.length - 1];
                System.arraycopy(ws, 0, n, 0, i);
                System.arraycopy(ws, i + 1, n, i, ws.length - i - 1);
                watchers = n;
                return;
            }
        }
    }

    private void signalWatchers() {
        for (Watcher w : watchers) {
            w.eventQueueSignalled();
        }
    }
}
