package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractResource;

/** A completion event channel ({@code struct ibv_comp_channel}). Thread safe. */
public final class NativeCompletionChannel extends AbstractResource implements CompletionChannel {
    private final NativeContext context;
    private final MemorySegment handle;

    NativeCompletionChannel(NativeContext context) {
        this.context = context;
        this.handle = MemorySegment.NULL;
        throw new VerbsException(Errno.EOPNOTSUPP, "ibv_create_comp_channel: not implemented yet");
    }

    /** The {@code struct ibv_comp_channel *}. */
    public MemorySegment handle() {
        return handle;
    }

    @Override
    public NativeContext context() {
        return context;
    }

    @Override
    public CompletionQueue getEvent(long timeoutMs) throws InterruptedException {
        throw new VerbsException(Errno.EOPNOTSUPP, "ibv_get_cq_event: not implemented yet");
    }

    @Override
    public boolean hasEvent() {
        return false;
    }

    @Override
    protected String describe() {
        return "completion channel";
    }

    @Override
    protected void destroy() {}
}
