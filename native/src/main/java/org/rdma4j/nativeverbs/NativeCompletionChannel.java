// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.nativeverbs.abi.Ibv;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.spi.AbstractResource;
import org.rdma4j.verbs.spi.ffm.ErrnoCapture;

/**
 * A completion event channel ({@code struct ibv_comp_channel}). Its fd is made non-blocking;
 * {@link #getEvent} reads with ibv_get_cq_event and waits with poll(2), so a close wakes it. Thread safe.
 */
public final class NativeCompletionChannel extends AbstractResource implements CompletionChannel {
    private static final long CH_FD = offset(DeviceLayouts.ibv_comp_channel, "fd");
    private static final ThreadLocal<MemorySegment> TWO_POINTERS =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(ValueLayout.ADDRESS, 2));

    private final NativeContext context;
    private final MemorySegment handle;
    private final EventSource source;
    /** Events returned by {@link #getEvent}, per CQ, for the CQ's own count of unacknowledged events. */

    NativeCompletionChannel(NativeContext context) {
        uses(context);
        this.context = context;
        MemorySegment ch = Downcalls.create(() -> "ibv_create_comp_channel(" + context.device().name() + ")", this::abandon,
                e -> (MemorySegment) Ibv.ibv_create_comp_channel.invokeExact(e, context.handle()));
        this.handle = Native.at(ch, DeviceLayouts.ibv_comp_channel.byteSize());
        EventSource s;
        try {
            s = new EventSource(handle.get(ValueLayout.JAVA_INT, CH_FD), "completion channel");
        } catch (RuntimeException e) {
            destroyChannel();
            abandon();
            throw e;
        }
        this.source = s;
    }

    /** The {@code struct ibv_comp_channel *}. */
    public MemorySegment handle() {
        return handle;
    }

    EventSource source() {
        return source;
    }

    @Override
    public NativeContext context() {
        return context;
    }

    @Override
    public CompletionQueue getEvent(long timeoutMs) throws InterruptedException {
        if (!source.enter()) {
            throw Fds.closed("completion channel");
        }
        try {
            long deadline = EventSource.deadline(timeoutMs);
            MemorySegment out = TWO_POINTERS.get();
            ErrnoCapture errno = ErrnoCapture.perThread();
            while (true) {
                int rc;
                try { // called directly (no lambda): waiting for an event allocates nothing
                    rc = (int) Ibv.ibv_get_cq_event.invokeExact(errno.segment(), handle, out,
                            out.asSlice(ValueLayout.ADDRESS.byteSize()));
                } catch (Throwable t) {
                    throw Downcalls.rethrow(t);
                }
                if (rc == 0) {
                    Object cq = context.tracked(out.get(ValueLayout.ADDRESS, 0).address());
                    if (cq instanceof NativeCompletionQueue q) {
                        q.eventDelivered(); // to be acknowledged before the CQ may be destroyed
                        return q;
                    }
                    continue; // a CQ being destroyed: not returned
                }
                if (errno.errno() != Errno.EAGAIN) {
                    throw Downcalls.fail(rc, "ibv_get_cq_event");
                }
                if (!source.await(timeoutMs, deadline)) {
                    return null;
                }
            }
        } finally {
            source.exit();
        }
    }

    @Override
    public boolean hasEvent() {
        return source.ready();
    }

    @Override
    protected String describe() {
        return "completion channel fd " + (handle == null ? -1 : source == null ? -1 : source.fd) + " of "
                + context.device().name();
    }

    @Override
    protected void destroy() {
        source.shutdown();
        destroyChannel();
        source.release();
    }

    private void destroyChannel() {
        Downcalls.check(() -> "ibv_destroy_comp_channel",
                e -> (int) Ibv.ibv_destroy_comp_channel.invokeExact(e, handle));
    }
}
