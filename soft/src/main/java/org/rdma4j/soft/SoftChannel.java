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
    }

    @Override
    public Context context() {
        return context;
    }

    void signal(SoftCq cq) {
        events.offer(cq);
    }

    @Override
    public CompletionQueue getEvent(long timeoutMs) throws InterruptedException {
        if (timeoutMs != 0) {
            context.hca.pollerBlocks(); // this thread will not poll the link while it waits here
        }
        return events.take(timeoutMs, SoftCq::eventDelivered);
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
