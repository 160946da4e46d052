// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.util.concurrent.TimeUnit;
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
 * file descriptors extends {@link AbstractEventPoller} with {@code poll(2)} instead. Thread safe as
 * {@link EventPoller} says.
 */
public final class QueueEventPoller extends AbstractEventPoller<EventQueue<?>> implements EventQueue.Watcher {
    /** A poller with no sources; a provider's {@link Context#createEventPoller()} returns one. */
    public QueueEventPoller() {
    }

    private volatile boolean signalled;
    private volatile boolean wakeupRequested;

    @Override
    public void add(CompletionChannel channel) {
        register(channel);
    }

    @Override
    public void add(Context context) {
        register(context);
    }

    private void register(VerbsResource source) {
        ensureOpen();
        if (!(source instanceof EventQueue.Owner owner)) {
            throw new VerbsException(Errno.EINVAL, source + " belongs to another provider");
        }
        register(source, owner.eventQueue());
    }

    @Override
    protected void registered(EventQueue<?> q) {
        q.addWatcher(this);
        eventQueueSignalled(); // it may be ready already: a poll in progress looks again
    }

    @Override
    protected void unregistered(EventQueue<?> q) {
        q.removeWatcher(this);
    }

    @Override
    public void wakeup() {
        wakeupRequested = true;
        eventQueueSignalled();
    }

    @Override
    public void eventQueueSignalled() {
        signalled = true;
        Thread t = pollingThread();
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public int poll(long timeoutMs) throws InterruptedException {
        enterPoll();
        try {
            long deadline = System.nanoTime() + (timeoutMs > 0 ? TimeUnit.MILLISECONDS.toNanos(timeoutMs) : 0);
            while (true) {
                signalled = false;
                int n = scan();
                if (n > 0 || wakeupRequested) {
                    wakeupRequested = false;
                    return n;
                }
                if (isClosed()) {
                    throw closedError();
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
            leavePoll();
        }
    }

    /** Fills the ready list from the registered queues; drops closed sources. */
    private int scan() {
        Sources<EventQueue<?>> r = sources();
        readyCapacity(r.size());
        int n = 0;
        for (int i = 0; i < r.size(); i++) {
            EventQueue<?> q = r.detail(i);
            if (q.isClosed()) {
                n = report(n, r.source(i), CLOSED);
            } else if (q.hasEvent()) {
                n = report(n, r.source(i), IN);
            }
        }
        readyCount(n);
        return n;
    }

    @Override
    protected void closing() {
        Sources<EventQueue<?>> r = sources();
        for (int i = 0; i < r.size(); i++) {
            r.detail(i).removeWatcher(this);
        }
        forgetSources();
        eventQueueSignalled();
    }

    @Override
    public String toString() {
        return "event poller (" + sources().size() + " sources)" + (isClosed() ? " (closed)" : "");
    }
}
