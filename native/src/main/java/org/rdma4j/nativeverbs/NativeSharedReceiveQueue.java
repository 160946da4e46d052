package org.rdma4j.nativeverbs;

import org.rdma4j.verbs.*;
import org.rdma4j.verbs.spi.AbstractResource;

/** Placeholder: the native shared receive queue is written by the data-path work; creating one fails with EOPNOTSUPP. */
@SuppressWarnings("unused")
final class NativeSharedReceiveQueue extends AbstractResource implements SharedReceiveQueue {
    NativeSharedReceiveQueue(NativeProtectionDomain pd, SrqAttr attr) {
        throw new VerbsException(Errno.EOPNOTSUPP, "native shared receive queue: not implemented yet");
    }

    @Override
    protected String describe() {
        return "native shared receive queue";
    }

    @Override
    protected void destroy() {}

    @Override public ProtectionDomain pd() { throw new UnsupportedOperationException(); }
    @Override public int srqn() { throw new UnsupportedOperationException(); }
    @Override public void postRecv(RecvWorkRequest wr) { throw new UnsupportedOperationException(); }
    @Override public void modify(SrqAttr attr, int mask) { throw new UnsupportedOperationException(); }
    @Override public SrqAttr query() { throw new UnsupportedOperationException(); }
}
