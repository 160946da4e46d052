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
        /** The queue has an event or was closed: look again (must not block). */
        void eventQueueSignalled();
    }

    /** A channel or context whose events live in an {@link EventQueue}: {@link QueueEventPoller} can wait on it. */
    public interface Owner {
        /** {@return the queue holding the owner's events} */
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
     * An open, empty queue.
     *
     * @param what   names the owner in the EBADF message, e.g. "completion channel"
     * @param accept decides, under the queue's lock, whether an offered event is still wanted (false for
     *               an event of an object being destroyed, so none slips in after {@link #purge})
     */
    public EventQueue(String what, Predicate<? super E> accept) {
        this.what = what;
        this.accept = accept;
    }

    /**
     * Queues {@code e} and wakes a waiter and every watcher.
     *
     * @param e the event
     * @return true if queued, false (dropped) when closed or not accepted
     */
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
     *
     * @param timeoutMs the longest wait in milliseconds; 0 = do not wait, negative = until one comes
     * @param onTake    run with the event taken, under the lock; may be null
     * @return the event, or null after the timeout
     * @throws InterruptedException if the waiting thread is interrupted
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

    /** {@return true while an event is queued (a take would not wait); false once closed} */
    public boolean hasEvent() {
        lock.lock();
        try {
            return !closed && !events.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    /** {@return whether {@link #close()} was called} */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Removes the queued events matching {@code match} (the events of a destroyed object, S-LIFE-3).
     *
     * @param match selects the events to drop
     * @return how many were removed
     */
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

    /**
     * Runs {@code action} holding the queue's lock: no offer, take or purge happens meanwhile.
     *
     * @param <T>    the result type
     * @param action what to run; must not block
     * @return what {@code action} returned
     */
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

    /**
     * Registers {@code w} to be told of every offer and of the close; adding it twice does nothing.
     *
     * @param w the watcher
     */
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

    /**
     * Unregisters {@code w}; nothing if it was not registered.
     *
     * @param w the watcher
     */
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
