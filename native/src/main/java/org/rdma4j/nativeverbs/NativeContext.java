package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractResource;

/** An open libibverbs device ({@code struct ibv_context}). Thread safe. */
public final class NativeContext extends AbstractResource implements Context {
    private final NativeDevice device;
    private final MemorySegment handle;
    /** Native object address (cq, qp, srq) -> its Java object, for asynchronous events. */
    private final Map<Long, Object> tracked = new ConcurrentHashMap<>();

    NativeContext(NativeDevice device, MemorySegment handle) {
        this.device = device;
        this.handle = handle;
    }

    /** The {@code struct ibv_context *}. */
    public MemorySegment handle() {
        return handle;
    }

    /** Maps {@code nativeObj} (a cq, qp or srq pointer) to {@code o} for {@link #tracked}. */
    public void track(MemorySegment nativeObj, Object o) {
        tracked.put(nativeObj.address(), o);
    }

    public void untrack(MemorySegment nativeObj) {
        tracked.remove(nativeObj.address());
    }

    /** The Java object {@link #track} recorded for a native address, or null. */
    public Object tracked(long address) {
        return tracked.get(address);
    }

    @Override
    public NativeDevice device() {
        return device;
    }

    private static VerbsException todo(String verb) {
        return new VerbsException(Errno.EOPNOTSUPP, verb + ": not implemented yet");
    }

    @Override
    public DeviceAttr queryDevice() {
        throw todo("ibv_query_device");
    }

    @Override
    public PortAttr queryPort(int portNum) {
        throw todo("ibv_query_port");
    }

    @Override
    public Gid queryGid(int portNum, int index) {
        throw todo("ibv_query_gid");
    }

    @Override
    public GidEntry queryGidEntry(int portNum, int index) {
        throw todo("ibv_query_gid_ex");
    }

    @Override
    public int queryPkey(int portNum, int index) {
        throw todo("ibv_query_pkey");
    }

    @Override
    public ProtectionDomain allocPd() {
        return new NativeProtectionDomain(this);
    }

    @Override
    public CompletionChannel createCompletionChannel() {
        throw todo("ibv_create_comp_channel");
    }

    @Override
    public CompletionQueue createCq(int cqe, CompletionChannel channel, int compVector) {
        return new NativeCompletionQueue(this, cqe, (NativeCompletionChannel) channel, compVector);
    }

    @Override
    public AsyncEvent getAsyncEvent(long timeoutMs) throws InterruptedException {
        throw todo("ibv_get_async_event");
    }

    @Override
    public boolean hasAsyncEvent() {
        return false;
    }

    @Override
    public EventPoller createEventPoller() {
        throw todo("event poller");
    }

    @Override
    public void ackAsyncEvent(AsyncEvent event) {
        throw todo("ibv_ack_async_event");
    }

    @Override
    public Map<String, Long> counters(int portNum) {
        return Map.of();
    }

    @Override
    protected String describe() {
        return "context " + device.name();
    }

    @Override
    protected void destroy() {}
}
