package org.rdma4j.nativeverbs;

import org.rdma4j.verbs.*;
import org.rdma4j.verbs.spi.AbstractResource;

/** Placeholder: the native completion queue is written by the data-path work; creating one fails with EOPNOTSUPP. */
@SuppressWarnings("unused")
final class NativeCompletionQueue extends AbstractResource implements CompletionQueue {
    NativeCompletionQueue(NativeContext context, int cqe, NativeCompletionChannel channel, int compVector) {
        throw new VerbsException(Errno.EOPNOTSUPP, "native completion queue: not implemented yet");
    }

    @Override
    protected String describe() {
        return "native completion queue";
    }

    @Override
    protected void destroy() {}

    @Override public Context context() { throw new UnsupportedOperationException(); }
    @Override public int cqe() { throw new UnsupportedOperationException(); }
    @Override public CompletionChannel channel() { throw new UnsupportedOperationException(); }
    @Override public int poll(WorkCompletion[] wcs) { throw new UnsupportedOperationException(); }
    @Override public int poll(WorkCompletion[] wcs, int max) { throw new UnsupportedOperationException(); }
    @Override public void reqNotify(boolean solicitedOnly) { throw new UnsupportedOperationException(); }
    @Override public void resize(int cqe) { throw new UnsupportedOperationException(); }
    @Override public void ackEvents(int n) { throw new UnsupportedOperationException(); }
}
