package org.rdma4j.verbs;

/** A completion event channel ({@code struct ibv_comp_channel}). Thread safe. */
public interface CompletionChannel extends VerbsResource {
    Context context();

    /**
     * {@code ibv_get_cq_event} with a timeout: blocks until an armed CQ attached to this channel gets a
     * completion; returns that CQ, or null after {@code timeoutMs} (0 = do not wait, negative = forever).
     * Every event must be acknowledged with {@link CompletionQueue#ackEvents}.
     */
    CompletionQueue getEvent(long timeoutMs) throws InterruptedException;
}
