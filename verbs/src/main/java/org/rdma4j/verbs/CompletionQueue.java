// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A completion queue ({@code struct ibv_cq}). One poller per CQ is the fast path; polling from two
 * threads is safe but serialised. Waiting for completions without a loop of your own:
 * {@link #poll(WorkCompletion[], IdleStrategy, long)}, or a {@link CqPoller} that hands them out one
 * at a time.
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
     * Polls until at least one completion arrives or {@code timeoutNs} passes, doing what {@code idle}
     * says between empty polls: fills up to {@code max} slots and returns how many, or 0 when the
     * time ran out (as {@code poll(2)} does). Polls at least once, also with a timeout of 0.
     * Allocates nothing; the thread's interrupt status ends the wait early (returning 0, the status
     * kept).
     */
    default int poll(WorkCompletion[] wcs, int max, IdleStrategy idle, long timeoutNs) {
        int n = poll(wcs, max);
        if (n != 0) {
            return n;
        }
        long start = System.nanoTime();
        idle.reset();
        while (true) {
            idle.idle();
            n = poll(wcs, max);
            if (n != 0) {
                idle.reset();
                return n;
            }
            if (System.nanoTime() - start >= timeoutNs || Thread.currentThread().isInterrupted()) {
                return 0;
            }
        }
    }

    /** {@link #poll(WorkCompletion[], int, IdleStrategy, long)} into all of {@code wcs}. */
    default int poll(WorkCompletion[] wcs, IdleStrategy idle, long timeoutNs) {
        return poll(wcs, wcs.length, idle, timeoutNs);
    }

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
