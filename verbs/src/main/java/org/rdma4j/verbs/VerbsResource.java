// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Every verbs object is a resource with an honest lifetime: {@link #close()} releases it, is
 * idempotent, and fails with EBUSY while other resources still use it (a PD with MRs or QPs, a CQ
 * with QPs, a channel with CQs), exactly like the libibverbs destroy/dealloc calls. Using a closed
 * object throws {@link IllegalStateException}, except for the blocking calls
 * ({@link CompletionChannel#getEvent}, {@link Context#getAsyncEvent}, {@link EventPoller#poll}): they
 * throw {@link VerbsException} EBADF, both in threads that were waiting when the close happened and in
 * later calls, so a waiting loop ends the same way whenever the close comes.
 */
public interface VerbsResource extends AutoCloseable {
    /**
     * Whether the resource is closed.
     *
     * @return true once {@link #close()} succeeded; a close refused with EBUSY leaves it false
     */
    boolean isClosed();

    /**
     * Destroys the resource (the matching {@code ibv_destroy_*}, {@code ibv_dealloc_*} or
     * {@code ibv_dereg_mr}); does nothing if it is closed already.
     *
     * @throws VerbsException EBUSY while another resource still uses it (the message names them); the
     *     resource stays open and usable
     */
    @Override
    void close();
}
