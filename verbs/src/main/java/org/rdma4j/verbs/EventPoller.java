// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Waits on several completion channels and asynchronous event queues at once, as a C program calls
 * {@code poll(2)} on {@code ibv_comp_channel.fd} and {@code ibv_context.async_fd}. Readiness is
 * level-triggered: a source is reported while it has an event queued; read it with
 * {@link CompletionChannel#getEvent getEvent(0)} / {@link Context#getAsyncEvent getAsyncEvent(0)}.
 * A registered source that is closed is reported once with {@link #CLOSED} (like {@code POLLNVAL})
 * and removed. Get one from {@link Context#createEventPoller()}; it accepts the channels and contexts
 * of any context of the same provider.
 *
 * <p>One thread polls at a time (a second concurrent {@link #poll}: EBUSY); {@link #add},
 * {@link #remove}, {@link #wakeup} and {@link #close} are safe from any thread. A reused poller
 * allocates nothing per {@link #poll}.
 * {@snippet :
 * try (EventPoller poller = ctx.createEventPoller()) {
 *     poller.add(channel);
 *     poller.add(ctx);
 *     int n = poller.poll(1000);
 *     for (int i = 0; i < n; i++) {
 *         switch (poller.source(i)) {
 *             case CompletionChannel ch when poller.events(i) == EventPoller.IN -> {
 *                 CompletionQueue cq = ch.getEvent(0); // may be null if another thread took it
 *             }
 *             case Context c when poller.events(i) == EventPoller.IN -> {
 *                 AsyncEvent e = c.getAsyncEvent(0);
 *             }
 *             default -> { } // CLOSED: the source is gone and no longer polled
 *         }
 *     }
 * }
 * }
 */
public interface EventPoller extends VerbsResource {
    /** The source has an event queued ({@code POLLIN}). */
    int IN = 1;
    /** The source was closed; it has been removed from this poller ({@code POLLNVAL}). */
    int CLOSED = 2;

    /**
     * Adds a completion channel. EEXIST if it is already registered, EINVAL if it belongs to another
     * provider; IllegalStateException if it (or this poller) is closed.
     */
    void add(CompletionChannel channel);

    /** Adds a context's asynchronous event queue; errors as for {@link #add(CompletionChannel)}. */
    void add(Context context);

    /** Removes a channel or context; false if it was not registered. */
    boolean remove(VerbsResource source);

    /**
     * Makes the {@link #poll} in progress return now (or the next one return at once if none is in
     * progress), like {@code java.nio.channels.Selector.wakeup()}.
     */
    void wakeup();

    /**
     * Waits until at least one registered source is ready, up to {@code timeoutMs} (0: check without
     * waiting; negative: no limit), or until {@link #wakeup()}. Returns how many sources are reported
     * (0 after a timeout or wakeup); they are {@link #source(int) source(0 .. n-1)} until the next
     * poll. Throws {@link VerbsException} EBADF once this poller is closed, including in a thread
     * that was waiting when it closed.
     */
    int poll(long timeoutMs) throws InterruptedException;

    /** The {@code i}-th source reported by the last {@link #poll}: a {@link CompletionChannel} or a {@link Context}. */
    VerbsResource source(int i);

    /** What the last {@link #poll} reported for its {@code i}-th source: {@link #IN} or {@link #CLOSED}. */
    int events(int i);
}
