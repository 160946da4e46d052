// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Hands out the completions of one CQ one at a time, polling in batches and waiting with an
 * {@link IdleStrategy} up to a timeout: the loop every caller of {@code ibv_poll_cq} writes, once.
 * Allocates nothing after construction. A returned {@link WorkCompletion} is a slot of this poller,
 * valid until the next call. Completions it has polled but not yet handed out are held here, so use
 * one poller per CQ, from one thread.
 * {@snippet :
 * CqPoller completions = new CqPoller(cq);
 * WorkCompletion wc = completions.take(1_000_000_000L);   // ETIMEDOUT after a second
 * }
 */
public final class CqPoller {
    private final CompletionQueue cq;
    private final IdleStrategy idle;
    private final WorkCompletion[] slots;
    private int next;
    private int count;

    /**
     * A poller of {@code cq} in batches of 16 that backs off ({@link IdleStrategy#backoff()}).
     *
     * @param cq the CQ
     */
    public CqPoller(CompletionQueue cq) {
        this(cq, 16, IdleStrategy.backoff());
    }

    /**
     * A poller of {@code cq} that polls up to {@code batch} completions at once.
     *
     * @param cq    the CQ
     * @param batch the most completions one {@code ibv_poll_cq} takes, at least 1
     * @param idle  what to do between empty polls (owned by this poller from now on)
     * @throws IllegalArgumentException for a batch below 1
     */
    public CqPoller(CompletionQueue cq, int batch, IdleStrategy idle) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be at least 1: " + batch);
        }
        this.cq = cq;
        this.idle = idle;
        this.slots = WorkCompletion.array(batch);
    }

    /** {@return the CQ polled} */
    public CompletionQueue cq() {
        return cq;
    }

    /** {@return how many completions were polled from the CQ and not handed out yet} */
    public int pending() {
        return count - next;
    }

    /** {@return the next completion if one is there now, else null; never waits} */
    public WorkCompletion poll() {
        if (next == count) {
            count = cq.poll(slots);
            next = 0;
            if (count == 0) {
                return null;
            }
        }
        return slots[next++];
    }

    /**
     * The next completion, waiting up to {@code timeoutNs} with the poller's idle strategy.
     *
     * @param timeoutNs the longest wait in nanoseconds
     * @return the completion (valid until the next call), or null when none came in time (or the
     *     thread is interrupted: the status is kept)
     */
    public WorkCompletion poll(long timeoutNs) {
        if (next == count) {
            count = cq.poll(slots, slots.length, idle, timeoutNs);
            next = 0;
            if (count == 0) {
                return null;
            }
        }
        return slots[next++];
    }

    /**
     * The next completion, waiting up to {@code timeoutNs}; {@link VerbsException} with
     * {@link Errno#ETIMEDOUT} when none came in time. The completion may carry an error status.
     *
     * @param timeoutNs the longest wait in nanoseconds
     * @return the completion, valid until the next call
     * @throws VerbsException ETIMEDOUT as described
     */
    public WorkCompletion take(long timeoutNs) {
        WorkCompletion wc = poll(timeoutNs);
        if (wc == null) {
            throw new VerbsException(Errno.ETIMEDOUT, "no completion on the CQ within " + timeoutNs / 1_000_000
                    + " ms");
        }
        return wc;
    }

    /**
     * {@link #take(long)}, then checks the status: a completion that is not SUCCESS becomes a
     * {@link VerbsException} with {@link Errno#EIO} naming its status and work request id.
     *
     * @param timeoutNs the longest wait in nanoseconds
     * @return the successful completion, valid until the next call
     * @throws VerbsException ETIMEDOUT when none came in time, EIO for an error completion
     */
    public WorkCompletion takeSuccess(long timeoutNs) {
        WorkCompletion wc = take(timeoutNs);
        if (!wc.isSuccess()) {
            throw new VerbsException(Errno.EIO, "work request " + wc.wrId() + " completed with " + wc.status()
                    + " (vendor_err " + wc.vendorErr() + ")");
        }
        return wc;
    }
}
