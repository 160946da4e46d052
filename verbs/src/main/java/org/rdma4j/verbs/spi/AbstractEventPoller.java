// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;

/**
 * What every provider's {@link EventPoller} shares, whatever it waits on: the registered sources (an
 * immutable snapshot replaced under the poller's lock, so a poll reads it without locking), the rules
 * of registration (open poller, open source, not twice), the one polling thread, the list of the last
 * poll's results, and an idempotent close. A provider writes the wait ({@link #poll}), what a
 * registration means to it ({@link #registered}, {@link #unregistered}) and what closing does
 * ({@link #closing}). Thread safe as {@link EventPoller} says.
 *
 * @param <T> what the provider keeps per source (its event queue, its file descriptors)
 */
public abstract class AbstractEventPoller<T> implements EventPoller {
    private static final Sources<?> NONE = new Sources<>(new VerbsResource[0], new Object[0]);

    private volatile Sources<T> registered = none();
    private final AtomicReference<Thread> poller = new AtomicReference<>();
    private volatile boolean closed;
    // The result of the last poll; only the polling thread touches these.
    private VerbsResource[] ready = new VerbsResource[0];
    private int[] readyEvents = new int[0];
    private int readyCount;

    /** A poller with no sources. */
    protected AbstractEventPoller() {
    }

    /**
     * The registered sources and what the provider keeps for each, index for index. Immutable: a
     * registration replaces it.
     *
     * @param <T> what the provider keeps per source
     */
    protected static final class Sources<T> {
        private final VerbsResource[] sources;
        private final Object[] details;

        private Sources(VerbsResource[] sources, Object[] details) {
            this.sources = sources;
            this.details = details;
        }

        /** {@return how many sources are registered} */
        public int size() {
            return sources.length;
        }

        /**
         * The {@code i}th source.
         *
         * @param i its index
         * @return the source
         */
        public VerbsResource source(int i) {
            return sources[i];
        }

        /**
         * What the provider keeps for the {@code i}th source.
         *
         * @param i its index
         * @return what was registered with it
         */
        @SuppressWarnings("unchecked")
        public T detail(int i) {
            return (T) details[i];
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> Sources<T> none() {
        return (Sources<T>) NONE;
    }

    /** {@return the sources registered now, for one poll to read} */
    protected final Sources<T> sources() {
        return registered;
    }

    /**
     * Registers {@code source} with {@code detail}, under the poller's lock: IllegalStateException when
     * the poller or the source is closed, EEXIST when the source is registered already; then
     * {@link #registered}.
     *
     * @param source the channel or context
     * @param detail what the provider keeps for it
     */
    protected final synchronized void register(VerbsResource source, T detail) {
        ensureOpen();
        if (source.isClosed()) {
            throw new IllegalStateException(source + " is closed");
        }
        Sources<T> r = registered;
        for (VerbsResource s : r.sources) {
            if (s == source) {
                throw new VerbsException(Errno.EEXIST, source + " is already registered");
            }
        }
        VerbsResource[] s = Arrays.copyOf(r.sources, r.sources.length + 1);
        Object[] d = Arrays.copyOf(r.details, r.details.length + 1);
        s[s.length - 1] = source;
        d[d.length - 1] = detail;
        registered = new Sources<>(s, d);
        registered(detail);
    }

    /**
     * A source was registered with {@code detail} (under the poller's lock): e.g. wake a poll in
     * progress so that it takes the source in.
     *
     * @param detail what the provider keeps for the source
     */
    protected abstract void registered(T detail);

    /**
     * A source registered with {@code detail} is being removed (under the poller's lock); nothing by
     * default.
     *
     * @param detail what the provider kept for the source
     */
    protected void unregistered(T detail) {
    }

    @Override
    public final synchronized boolean remove(VerbsResource source) {
        Sources<T> r = registered;
        VerbsResource[] s = r.sources;
        for (int i = 0; i < s.length; i++) {
            if (s[i] == source) {
                unregistered(r.detail(i));
                registered = new Sources<>(without(s, i, new VerbsResource[s.length - 1]),
                        without(r.details, i, new Object[s.length - 1]));
                return true;
            }
        }
        return false;
    }

    private static <E> E[] without(E[] from, int i, E[] to) {
        System.arraycopy(from, 0, to, 0, i);
        System.arraycopy(from, i + 1, to, i, from.length - i - 1);
        return to;
    }

    /**
     * The opening of every {@link #poll}: EBADF when the poller is closed, EBUSY when another thread
     * polls it; then this thread is the polling thread until {@link #leavePoll}.
     */
    protected final void enterPoll() {
        if (closed) {
            throw closedError();
        }
        if (!poller.compareAndSet(null, Thread.currentThread())) {
            throw new VerbsException(Errno.EBUSY, "another thread is polling this event poller");
        }
    }

    /** Ends what {@link #enterPoll} began: call in a {@code finally}. */
    protected final void leavePoll() {
        poller.set(null);
    }

    /** {@return the thread polling now, or null} */
    protected final Thread pollingThread() {
        return poller.get();
    }

    /** {@return what a poll of a closed poller throws: EBADF} */
    protected final VerbsException closedError() {
        return new VerbsException(Errno.EBADF, "event poller is closed");
    }

    /**
     * Makes room for {@code n} results of a poll (polling thread only).
     *
     * @param n how many sources a poll may report
     */
    protected final void readyCapacity(int n) {
        if (ready.length < n) {
            ready = Arrays.copyOf(ready, n);
            readyEvents = Arrays.copyOf(readyEvents, n);
        }
    }

    /**
     * Records a result of the poll in progress (polling thread only).
     *
     * @param count  the results recorded so far
     * @param source the source that is ready
     * @param events {@link #IN} or {@link #CLOSED}
     * @return {@code count + 1}
     */
    protected final int report(int count, VerbsResource source, int events) {
        ready[count] = source;
        readyEvents[count] = events;
        return count + 1;
    }

    /**
     * Ends the poll's results at {@code n} (polling thread only), after removing the sources reported
     * {@link #CLOSED}: {@link #source} and {@link #events} answer for these.
     *
     * @param n how many results the poll returns
     */
    protected final void readyCount(int n) {
        for (int i = 0; i < n; i++) {
            if (readyEvents[i] == CLOSED) {
                remove(ready[i]);
            }
        }
        for (int i = n; i < readyCount; i++) {
            ready[i] = null; // do not keep sources of earlier polls alive
        }
        readyCount = n;
    }

    @Override
    public final VerbsResource source(int i) {
        return ready[checkIndex(i)];
    }

    @Override
    public final int events(int i) {
        return readyEvents[checkIndex(i)];
    }

    private int checkIndex(int i) {
        if (i < 0 || i >= readyCount) {
            throw new IndexOutOfBoundsException("index " + i + ", the last poll reported " + readyCount);
        }
        return i;
    }

    /**
     * Refuses registration after close.
     *
     * @throws IllegalStateException once the poller is closed
     */
    protected final void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("event poller is closed");
        }
    }

    @Override
    public final boolean isClosed() {
        return closed;
    }

    /** Idempotent: the first call marks the poller closed and runs {@link #closing} under its lock. */
    @Override
    public final synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        closing();
    }

    /**
     * What closing does once the poller is marked closed (under its lock): wake a poll in progress, let
     * go of the sources ({@link #forgetSources}), free what the poller holds.
     */
    protected abstract void closing();

    /** Drops every registration (from {@link #closing}); {@link #unregistered} is not called. */
    protected final void forgetSources() {
        registered = none();
    }
}
