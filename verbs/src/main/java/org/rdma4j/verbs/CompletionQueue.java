package org.rdma4j.verbs;

/**
 * A completion queue ({@code struct ibv_cq}). One poller per CQ is the fast path; polling from two
 * threads is safe but serialised.
 */
public interface CompletionQueue extends VerbsResource {
    Context context();

    /** The number of entries (>= what was requested). */
    int cqe();

    /** The completion channel events go to, or null. */
    CompletionChannel channel();

    /** {@code ibv_poll_cq}: fills up to {@code wcs.length} slots; returns how many. Allocates nothing. */
    int poll(WorkCompletion[] wcs);

    /** {@code ibv_poll_cq} into the first {@code max} slots. */
    int poll(WorkCompletion[] wcs, int max);

    /**
     * {@code ibv_req_notify_cq}: arms the CQ for one event on its channel at the next completion
     * (solicitedOnly: at the next solicited receive or error completion).
     */
    void reqNotify(boolean solicitedOnly);

    /** {@code ibv_resize_cq}; below the number of queued CQEs or above max: EINVAL, nothing lost. */
    void resize(int cqe);

    /** {@code ibv_ack_cq_events}: all events got from the channel must be acked before close. */
    void ackEvents(int n);
}
