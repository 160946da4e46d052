// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.spi.AbstractResource;
import org.rdma4j.verbs.spi.EventQueue;

/** A soft completion channel: a queue of CQ events. Thread safe. */
final class SoftChannel extends AbstractResource implements CompletionChannel, EventQueue.Owner {
    final SoftContext context;
    /** One entry per event; an event of a CQ being destroyed is refused (see SoftCq#busyReason). */
    final EventQueue<SoftCq> events = new EventQueue<>("completion channel", cq -> !cq.dying);
    /** The thread waiting for an event by receiving on the link (see {@link #getEvent}), or null. */
    private volatile Thread linkWaiter;

    SoftChannel(SoftContext context) {
        this.context = context;
        uses(context);
    }

    @Override
    protected String describe() {
        return "completion channel";
    }

    @Override
    protected void destroy() {
        events.close(); // wakes every waiter with EBADF
        if (linkWaiter != null) {
            context.hca.wakeLinkAwait(); // and one waiting in the link
        }
    }

    @Override
    public Context context() {
        return context;
    }

    void signal(SoftCq cq) {
        events.offer(cq);
        Thread w = linkWaiter; // read after the offer: see getEvent
        if (w != null && w != Thread.currentThread()) {
            context.hca.wakeLinkAwait();
        }
    }

    /**
     * Waits for an event by receiving on the device's link itself ({@code Hca#awaitLink}) where it can:
     * the packet that completes the work is then handled on this thread, which needs no wake-up from the
     * link's receive thread. An event produced on another thread (a timer, a loopback peer, another
     * receiver) wakes the wait ({@link #signal}). Where the link cannot (CHANNEL mode, another thread
     * receiving), the wait is on the event queue, and the link's receive agent is told to receive.
     * Interrupts and the deadline are checked at least every 50 ms.
     */
    @Override
    public CompletionQueue getEvent(long timeoutMs) throws InterruptedException {
        if (timeoutMs == 0) {
            return events.take(0, SoftCq::eventDelivered);
        }
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        for (;;) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            CompletionQueue cq = events.take(0, SoftCq::eventDelivered);
            if (cq != null) {
                return cq;
            }
            long left = timeoutMs > 0 ? deadline - System.nanoTime() : Long.MAX_VALUE;
            if (left <= 0) {
                return null;
            }
            int n;
            Thread me = Thread.currentThread();
            linkWaiter = me; // written before the check: a signal after it wakes us
            try {
                if (events.hasEvent() || events.isClosed()) {
                    continue;
                }
                n = context.hca.awaitLink(left);
            } finally {
                // Two waiters on one channel: the second cannot await (the first holds the link) and
                // leaves the field to the first (a race here costs the first at most one 50 ms slice).
                if (linkWaiter == me) {
                    linkWaiter = null;
                }
            }
            if (n < 0) {
                context.hca.pollerBlocks(); // this thread will not poll the link while it waits here
                long ms = timeoutMs > 0 ? Math.max(1, (deadline - System.nanoTime()) / 1_000_000) : -1;
                return events.take(ms, SoftCq::eventDelivered);
            }
        }
    }

    @Override
    public boolean hasEvent() {
        return events.hasEvent();
    }

    @Override
    public EventQueue<?> eventQueue() {
        return events;
    }
}
