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
    /** True once {@link #close()} succeeded. */
    boolean isClosed();

    /** Destroys the resource; throws {@link VerbsException} (EBUSY) while it is still in use. */
    @Override
    void close();
}
