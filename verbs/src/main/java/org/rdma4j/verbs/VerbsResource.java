package org.rdma4j.verbs;

/**
 * Every verbs object is a resource with an honest lifetime: {@link #close()} releases it, is
 * idempotent, and fails with EBUSY while other resources still use it (a PD with MRs or QPs, a CQ
 * with QPs, a channel with CQs), exactly like the libibverbs destroy/dealloc calls. Using a closed
 * object throws {@link IllegalStateException}.
 */
public interface VerbsResource extends AutoCloseable {
    /** True once {@link #close()} succeeded. */
    boolean isClosed();

    /** Destroys the resource; throws {@link VerbsException} (EBUSY) while it is still in use. */
    @Override
    void close();
}
