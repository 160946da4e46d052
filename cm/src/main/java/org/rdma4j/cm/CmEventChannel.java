// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * Where the events of {@link CmId}s arrive (rdma_create_event_channel). One or more threads may wait in
 * {@link #getEvent}; {@link #close()} wakes them all (EBADF). Thread safe.
 *
 * {@snippet :
 * try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
 *     id.resolveAddr(null, new InetSocketAddress(server, 7174), 2000);
 *     CmEvent e = ch.getEvent(2, TimeUnit.SECONDS);   // ADDR_RESOLVED
 *     e.ack();
 * }
 * }
 */
public final class CmEventChannel implements AutoCloseable {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition nonEmpty = lock.newCondition();
    private final ArrayDeque<CmEvent> queue = new ArrayDeque<>();
    private int unacked;
    private boolean closed;

    /** Creates an event channel. */
    public CmEventChannel() {
        CmLog.ready(); // the logging backend starts here, not inside the first REQ's handling
    }

    /**
     * Creates an id on this channel (rdma_create_id).
     *
     * @param ps the port space
     * @return the new id
     * @throws VerbsException EBADF when the channel is closed; EPROTONOSUPPORT for {@link PortSpace#IB}
     */
    public CmId createId(PortSpace ps) {
        return CmId.create(this, ps);
    }

    /**
     * Waits up to {@code timeout} for the next event (rdma_get_cm_event with a bound).
     *
     * @param timeout how long; 0 does not wait
     * @param unit its unit
     * @return the event, or null when none came in time
     * @throws VerbsException EBADF when the channel is closed before or while waiting
     * @throws InterruptedException if interrupted while waiting
     */
    public CmEvent getEvent(long timeout, TimeUnit unit) throws InterruptedException {
        long left = unit.toNanos(timeout);
        CmEvent e;
        lock.lock();
        try {
            while (true) {
                if (closed) {
                    throw new VerbsException(Errno.EBADF, "get CM event: the event channel is closed");
                }
                e = queue.poll();
                if (e != null) {
                    unacked++;
                    break;
                }
                if (left <= 0) {
                    return null;
                }
                left = nonEmpty.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
        if (e.type() == CmEventType.CONNECT_REQUEST) {
            CmEngine.INSTANCE.connectRequestTaken(e.listenId()); // the backlog counts requests not yet taken
        }
        return e;
    }

    /** {@return the number of events taken and not yet acknowledged (rdma_ack_cm_event not called)} */
    public int unackedEvents() {
        lock.lock();
        try {
            return unacked;
        } finally {
            lock.unlock();
        }
    }

    /** {@return whether {@link #close()} was called} */
    public boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Closes the channel (rdma_destroy_event_channel): waiters wake with EBADF, queued events are
     * dropped, and events of ids still on it are dropped from now on. The new id of a CONNECT_REQUEST
     * not yet taken is destroyed with it (its peer gets a REJ): nothing else could ever close it.
     * Idempotent.
     */
    @Override
    public void close() {
        ArrayDeque<CmEvent> dropped;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            dropped = new ArrayDeque<>(queue);
            queue.clear();
            nonEmpty.signalAll();
        } finally {
            lock.unlock();
        }
        for (CmEvent e : dropped) {
            if (e.type() == CmEventType.CONNECT_REQUEST) {
                CmEngine.INSTANCE.connectRequestTaken(e.listenId());
                e.id().close();
            }
        }
    }

    /**
     * Takes the CONNECT_REQUESTs of {@code listener} not yet taken off the queue and destroys their new
     * ids (their peers get a REJ), as the kernel's ucma does when a listener is destroyed: a request the
     * program can no longer see leaves no id, agent or device context behind.
     */
    void dropRequestsOf(CmId listener) {
        java.util.List<CmEvent> dropped = new java.util.ArrayList<>();
        lock.lock();
        try {
            java.util.Iterator<CmEvent> it = queue.iterator();
            while (it.hasNext()) {
                CmEvent e = it.next();
                if (e.type() == CmEventType.CONNECT_REQUEST && e.listenId() == listener) {
                    it.remove();
                    dropped.add(e);
                }
            }
        } finally {
            lock.unlock();
        }
        for (CmEvent e : dropped) {
            CmEngine.INSTANCE.connectRequestTaken(listener);
            e.id().close();
        }
    }

    /** Queues an event; false (and nothing queued) once closed. */
    boolean post(CmEvent e) {
        CmLog.posted(e);
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            queue.add(e);
            nonEmpty.signal();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** {@return the events queued and not yet taken} */
    int queued() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves the queued, not yet taken events of {@code id} to {@code to}, keeping their order (the
     * kernel's ucma_migrate_id moves them the same way). The caller holds the engine's lock, so no two
     * moves run at once; this channel's lock is taken before {@code to}'s.
     */
    void moveEventsOf(CmId id, CmEventChannel to) {
        lock.lock();
        try {
            to.lock.lock();
            try {
                java.util.Iterator<CmEvent> it = queue.iterator();
                while (it.hasNext()) {
                    CmEvent e = it.next();
                    if (e.id() == id && e.type() != CmEventType.CONNECT_REQUEST) {
                        it.remove();
                        if (!to.closed) {
                            e.channel(to);
                            to.queue.add(e);
                            to.nonEmpty.signal();
                        }
                    }
                }
            } finally {
                to.lock.unlock();
            }
        } finally {
            lock.unlock();
        }
    }

    void acked() {
        lock.lock();
        try {
            unacked--;
        } finally {
            lock.unlock();
        }
    }
}
