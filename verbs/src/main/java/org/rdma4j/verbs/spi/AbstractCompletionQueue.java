// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.util.concurrent.atomic.AtomicInteger;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;

/**
 * What every provider's {@link CompletionQueue} shares: its context and channel, and the count of
 * completion events its channel handed out and the application has not acknowledged
 * ({@code ibv_ack_cq_events}), which a provider's {@code busyReason} consults. Thread safe.
 *
 * @param <X> the provider's context type
 * @param <H> the provider's completion channel type
 */
public abstract class AbstractCompletionQueue<X extends Context, H extends CompletionChannel> extends AbstractResource
        implements CompletionQueue {
    private final X context;
    private final H channel;
    /** Events the channel handed out and the application has not acknowledged. */
    private final AtomicInteger unacked = new AtomicInteger();

    /**
     * A CQ of {@code context}, signalling {@code channel}; the subclass constructor claims them with
     * {@link #uses}.
     *
     * @param context the context the CQ is made in
     * @param channel its completion channel, or null
     */
    protected AbstractCompletionQueue(X context, H channel) {
        this.context = context;
        this.channel = channel;
    }

    @Override
    public final X context() {
        return context;
    }

    @Override
    public final H channel() {
        return channel;
    }

    @Override
    public final int poll(WorkCompletion[] wcs) {
        return poll(wcs, wcs.length);
    }

    /**
     * Counts down {@code n} events: EINVAL (nothing counted) when {@code n} is negative or more than are
     * unacknowledged; then {@link #eventsAcknowledged}.
     *
     * @throws IllegalStateException if the CQ is closed
     */
    @Override
    public final void ackEvents(int n) {
        ensureOpen();
        while (true) {
            int u = unacked.get();
            if (n < 0 || n > u) {
                throw new VerbsException(Errno.EINVAL, "acknowledging " + n + " events, " + u + " are unacknowledged");
            }
            if (unacked.compareAndSet(u, u - n)) {
                break;
            }
        }
        eventsAcknowledged(n);
    }

    /**
     * After {@link #ackEvents} counted {@code n} events down: what the provider must tell its device
     * (the native provider calls {@code ibv_ack_cq_events}); nothing by default.
     *
     * @param n how many events were acknowledged
     */
    protected void eventsAcknowledged(int n) {
    }

    /** The provider's channel handed out a completion event of this CQ: to be acknowledged before it may close. */
    public final void eventDelivered() {
        unacked.incrementAndGet();
    }

    /** {@return how many events the channel handed out and the application has not acknowledged} */
    protected final int unackedEvents() {
        return unacked.get();
    }
}
