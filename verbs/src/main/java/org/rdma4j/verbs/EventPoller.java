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
     *
     * @param channel the channel to watch
     * @throws VerbsException EEXIST or EINVAL as described
     */
    void add(CompletionChannel channel);

    /**
     * Adds a context's asynchronous event queue; errors as for {@link #add(CompletionChannel)}.
     *
     * @param context the context to watch
     * @throws VerbsException EEXIST or EINVAL as for {@link #add(CompletionChannel)}
     */
    void add(Context context);

    /**
     * Removes a channel or context.
     *
     * @param source the channel or context
     * @return true if it was registered, false otherwise
     */
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
     *
     * @param timeoutMs the longest wait in milliseconds; 0 = check without waiting, negative = no limit
     * @return how many sources are ready or closed, 0 after a timeout or a wakeup
     * @throws VerbsException EBADF once closed; EBUSY while another thread polls
     * @throws InterruptedException if the waiting thread is interrupted
     */
    int poll(long timeoutMs) throws InterruptedException;

    /**
     * The {@code i}-th source reported by the last {@link #poll}.
     *
     * @param i 0 to the last poll's result - 1
     * @return a {@link CompletionChannel} or a {@link Context}
     * @throws IndexOutOfBoundsException for another index
     */
    VerbsResource source(int i);

    /**
     * What the last {@link #poll} reported for its {@code i}-th source.
     *
     * @param i 0 to the last poll's result - 1
     * @return {@link #IN} or {@link #CLOSED}
     * @throws IndexOutOfBoundsException for another index
     */
    int events(int i);
}
