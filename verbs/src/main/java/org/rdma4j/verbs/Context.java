// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.util.Map;

/**
 * An open device ({@code struct ibv_context}): the root of every other resource. Thread safe.
 * {@snippet :
 * try (Context ctx = Verbs.open("soft0"); ProtectionDomain pd = ctx.allocPd()) {
 *     DeviceAttr attr = ctx.queryDevice();
 * }
 * }
 */
public interface Context extends VerbsResource {
    Device device();

    /** {@code ibv_query_device}. */
    DeviceAttr queryDevice();

    /** {@code ibv_query_port}; EINVAL for a port that does not exist. */
    PortAttr queryPort(int portNum);

    /** {@code ibv_query_gid}; EINVAL for a bad port or index, ENODATA for an empty entry. */
    Gid queryGid(int portNum, int index);

    /** {@code ibv_query_gid_ex}: the GID and its type; same errors as {@link #queryGid}. */
    GidEntry queryGidEntry(int portNum, int index);

    /** {@code ibv_query_pkey}; EINVAL for a bad port or index. */
    int queryPkey(int portNum, int index);

    /** {@code ibv_alloc_pd}. */
    ProtectionDomain allocPd();

    /** {@code ibv_create_comp_channel}. */
    CompletionChannel createCompletionChannel();

    /**
     * {@code ibv_create_cq}: at least {@code cqe} entries (1 .. max_cqe, else EINVAL), events to
     * {@code channel} (may be null), {@code compVector} below num_comp_vectors (else EINVAL).
     */
    CompletionQueue createCq(int cqe, CompletionChannel channel, int compVector);

    default CompletionQueue createCq(int cqe) {
        return createCq(cqe, null, 0);
    }

    /**
     * {@code ibv_get_async_event} with a timeout: the next asynchronous event, or null if none arrived
     * within {@code timeoutMs} (0 = do not wait, negative = forever). Events naming a QP, CQ or SRQ that
     * was destroyed before they were read are never returned.
     *
     * <p>Closing the context wakes every thread waiting here: the call throws {@link VerbsException}
     * with {@link Errno#EBADF}, and so does every later call. A close refused with EBUSY leaves the
     * waiters waiting.
     */
    AsyncEvent getAsyncEvent(long timeoutMs) throws InterruptedException;

    /**
     * True when an asynchronous event is queued ({@code poll(2)} on {@code async_fd} reporting
     * {@code POLLIN}); false once closed.
     */
    boolean hasAsyncEvent();

    /**
     * A new {@link EventPoller} that waits on this provider's completion channels and asynchronous
     * event queues together (this context's and other contexts' of the same provider).
     */
    EventPoller createEventPoller();

    /** {@code ibv_ack_async_event}. */
    void ackAsyncEvent(AsyncEvent event);

    /**
     * Port counters in the spirit of {@code /sys/class/infiniband/DEV/ports/N/hw_counters}: a
     * snapshot, names as keys.
     */
    Map<String, Long> counters(int portNum);
}
