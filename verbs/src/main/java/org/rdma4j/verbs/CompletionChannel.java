// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A completion event channel ({@code struct ibv_comp_channel}): where armed CQs
 * ({@link CompletionQueue#reqNotify}) signal that a completion arrived, so a thread can sleep instead
 * of polling. {@link #close()} is {@code ibv_destroy_comp_channel} and fails with EBUSY while a CQ uses
 * the channel. Thread safe.
 * {@snippet :
 * cq.reqNotify(false);
 * CompletionQueue ready = channel.getEvent(-1);  // sleeps until cq has a completion
 * ready.ackEvents(1);
 * ready.reqNotify(false);                        // re-arm, then drain
 * while (ready.poll(wcs) > 0) { ... }
 * }
 */
public interface CompletionChannel extends VerbsResource {
    /**
     * The context the channel was created in ({@code ibv_comp_channel.context}).
     *
     * @return the context
     */
    Context context();

    /**
     * {@code ibv_get_cq_event} with a timeout: blocks until an armed CQ attached to this channel gets a
     * completion; returns that CQ, or null after {@code timeoutMs} (0 = do not wait, negative = forever).
     * Every event must be acknowledged with {@link CompletionQueue#ackEvents}. Events of a CQ that was
     * destroyed before they were read are never returned.
     *
     * <p>Closing the channel wakes every thread waiting here: like {@code read(2)} on a closed
     * descriptor, the call throws {@link VerbsException} with {@link Errno#EBADF}, and so does every
     * later call. A close refused with EBUSY (CQs still attached) leaves the waiters waiting.
     *
     * @param timeoutMs how long to wait in milliseconds; 0 = do not wait, negative = until an event comes
     * @return the CQ that had a completion, or null after the timeout
     * @throws InterruptedException if the waiting thread is interrupted
     */
    CompletionQueue getEvent(long timeoutMs) throws InterruptedException;

    /**
     * True when an event is queued, so {@link #getEvent getEvent(0)} would return one unless another
     * thread takes it first ({@code poll(2)} on {@code channel->fd} reporting {@code POLLIN}); false
     * once closed.
     *
     * @return whether an event is queued
     */
    boolean hasEvent();
}
