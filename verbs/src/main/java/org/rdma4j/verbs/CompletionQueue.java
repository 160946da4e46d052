// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * A completion queue ({@code struct ibv_cq}). One poller per CQ is the fast path; polling from two
 * threads is safe but serialised. Waiting for completions without a loop of your own:
 * {@link #poll(WorkCompletion[], IdleStrategy, long)}, or a {@link CqPoller} that hands them out one
 * at a time.
 */
public interface CompletionQueue extends VerbsResource {
    /**
     * The context the CQ was created in ({@code ibv_cq.context}).
     *
     * @return the context
     */
    Context context();

    /**
     * {@code ibv_cq.cqe}: the number of entries, at least what was requested (creation or
     * {@link #resize}). More completions than this at once overflow the CQ: CQ_ERR, and its QPs move to
     * ERR (S-CQ-3).
     *
     * @return the capacity in completions
     */
    int cqe();

    /**
     * The completion channel events go to ({@code ibv_cq.channel}).
     *
     * @return the channel, or null when the CQ was created without one
     */
    CompletionChannel channel();

    /**
     * {@code ibv_poll_cq}: takes up to {@code wcs.length} completions, oldest first, into the slots.
     * Never waits; allocates nothing. After a completion with an error status its QP is in ERR and
     * the rest of its work completes WR_FLUSH_ERR (S-ERR-9).
     *
     * @param wcs the slots to fill, from index 0 ({@link WorkCompletion#array(int)})
     * @return how many slots were filled, 0 when the CQ is empty
     */
    int poll(WorkCompletion[] wcs);

    /**
     * {@code ibv_poll_cq} into the first {@code max} slots.
     *
     * @param wcs the slots
     * @param max the most completions to take, at most {@code wcs.length}
     * @return how many slots were filled, 0 when the CQ is empty
     */
    int poll(WorkCompletion[] wcs, int max);

    /**
     * Polls until at least one completion arrives or {@code timeoutNs} passes, doing what {@code idle}
     * says between empty polls: fills up to {@code max} slots and returns how many, or 0 when the
     * time ran out (as {@code poll(2)} does). Polls at least once, also with a timeout of 0.
     * Allocates nothing; the thread's interrupt status ends the wait early (returning 0, the status
     * kept). rdma4j's own (S-API-3).
     *
     * @param wcs       the slots
     * @param max       the most completions to take, at most {@code wcs.length}
     * @param idle      what to do between empty polls
     * @param timeoutNs the longest wait in nanoseconds
     * @return how many slots were filled, 0 when none came in time
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

    /**
     * {@link #poll(WorkCompletion[], int, IdleStrategy, long)} into all of {@code wcs}.
     *
     * @param wcs       the slots
     * @param idle      what to do between empty polls
     * @param timeoutNs the longest wait in nanoseconds
     * @return how many slots were filled, 0 when none came in time
     */
    default int poll(WorkCompletion[] wcs, IdleStrategy idle, long timeoutNs) {
        return poll(wcs, wcs.length, idle, timeoutNs);
    }

    /**
     * {@code ibv_req_notify_cq}: arms the CQ for one event on its channel at the next completion
     * (solicitedOnly: at the next solicited receive or error completion). One arming gives at most
     * one event (S-CQ-4); arm again after each {@link CompletionChannel#getEvent}, then poll, so no
     * completion is missed between the event and the new arming.
     *
     * @param solicitedOnly {@code solicited_only}: wake only for receives with the solicited flag
     *                      ({@link SendFlag#SOLICITED}) and for error completions; the arming
     *                      of a CQ without a channel has no visible effect
     */
    void reqNotify(boolean solicitedOnly);

    /**
     * {@code ibv_resize_cq}: gives the CQ at least {@code cqe} entries, keeping the queued completions
     * (S-CQ-2).
     *
     * @param cqe the new minimum number of entries, 1 to {@link DeviceAttr#maxCqe()}
     * @throws VerbsException EINVAL below the number of queued completions or above the maximum;
     *     nothing is lost
     */
    void resize(int cqe);

    /**
     * {@code ibv_ack_cq_events}: acknowledges {@code n} events this CQ delivered through
     * {@link CompletionChannel#getEvent}. Every event must be acknowledged before the CQ closes
     * (closing with unacknowledged events fails EBUSY, S-CQ-5); acknowledge in batches to save calls.
     *
     * @param n how many events
     */
    void ackEvents(int n);
}
