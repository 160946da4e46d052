package org.rdma4j.soft;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.spi.AbstractResource;

/** A soft completion channel: a queue of CQ events. Thread safe. */
final class SoftChannel extends AbstractResource implements CompletionChannel {
    final SoftContext context;
    private final LinkedBlockingQueue<SoftCq> events = new LinkedBlockingQueue<>();

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
        events.clear();
    }

    @Override
    public Context context() {
        return context;
    }

    void signal(SoftCq cq) {
        events.add(cq);
    }

    @Override
    public CompletionQueue getEvent(long timeoutMs) throws InterruptedException {
        ensureOpen();
        SoftCq cq = timeoutMs < 0 ? events.take() : events.poll(timeoutMs, TimeUnit.MILLISECONDS);
        if (cq != null) {
            cq.eventDelivered();
        }
        return cq;
    }
}
