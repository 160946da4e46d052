package org.rdma4j.nativeverbs;

import org.rdma4j.verbs.*;
import org.rdma4j.verbs.spi.AbstractResource;

/** Placeholder: the native queue pair is written by the data-path work; creating one fails with EOPNOTSUPP. */
@SuppressWarnings("unused")
final class NativeQueuePair extends AbstractResource implements QueuePair {
    NativeQueuePair(NativeProtectionDomain pd, QpInitAttr attr) {
        throw new VerbsException(Errno.EOPNOTSUPP, "native queue pair: not implemented yet");
    }

    @Override
    protected String describe() {
        return "native queue pair";
    }

    @Override
    protected void destroy() {}

    @Override public Context context() { throw new UnsupportedOperationException(); }
    @Override public ProtectionDomain pd() { throw new UnsupportedOperationException(); }
    @Override public int qpn() { throw new UnsupportedOperationException(); }
    @Override public QpType type() { throw new UnsupportedOperationException(); }
    @Override public QpState state() { throw new UnsupportedOperationException(); }
    @Override public CompletionQueue sendCq() { throw new UnsupportedOperationException(); }
    @Override public CompletionQueue recvCq() { throw new UnsupportedOperationException(); }
    @Override public SharedReceiveQueue srq() { throw new UnsupportedOperationException(); }
    @Override public void modify(QpAttr attr, int mask) { throw new UnsupportedOperationException(); }
    @Override public QpAttr query(QpAttr out, QpInitAttr initOut) { throw new UnsupportedOperationException(); }
    @Override public QpCap cap() { throw new UnsupportedOperationException(); }
    @Override public void postSend(SendWorkRequest wr) { throw new UnsupportedOperationException(); }
    @Override public void postRecv(RecvWorkRequest wr) { throw new UnsupportedOperationException(); }
    @Override public void attachMcast(Gid gid, int lid) { throw new UnsupportedOperationException(); }
    @Override public void detachMcast(Gid gid, int lid) { throw new UnsupportedOperationException(); }
}
