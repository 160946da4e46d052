// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import java.util.Map;

/**
 * An open device ({@code struct ibv_context}): the root of every other resource. Made by
 * {@link Device#open()}; {@link #close()} is {@code ibv_close_device} and fails with EBUSY while a PD,
 * CQ or completion channel (or a QP1 port of the SPI) of this context is open. Contexts of one device
 * are independent: each has its own resources and its own asynchronous events (port events go to every
 * context). Thread safe.
 * {@snippet :
 * try (Context ctx = Verbs.open("soft0"); ProtectionDomain pd = ctx.allocPd()) {
 *     DeviceAttr attr = ctx.queryDevice();
 * }
 * }
 */
public interface Context extends VerbsResource {
    /**
     * The device this context was opened on ({@code ibv_context.device}).
     *
     * @return the device
     */
    Device device();

    /**
     * {@code ibv_query_device}: the device's attributes and object limits (S-DEV-1).
     *
     * @return a snapshot of the attributes
     */
    DeviceAttr queryDevice();

    /**
     * {@code ibv_query_port}: a port's state, MTUs, GID table length and link layer.
     *
     * @param portNum the port, 1 to {@link DeviceAttr#physPortCnt()}
     * @return a snapshot of the port's attributes
     * @throws VerbsException EINVAL for port 0 or a port beyond the device's count (S-DEV-2)
     */
    PortAttr queryPort(int portNum);

    /**
     * {@code ibv_query_gid}: one entry of a port's GID table.
     *
     * @param portNum the port, from 1
     * @param index   the GID index, 0 to {@link PortAttr#gidTblLen()} - 1
     * @return the GID
     * @throws VerbsException EINVAL for a bad port or an index beyond the table, ENODATA for an empty
     *     entry (S-DEV-3)
     */
    Gid queryGid(int portNum, int index);

    /**
     * {@code ibv_query_gid_ex}: the GID and its type (RoCE v1 or v2, IB).
     *
     * @param portNum the port, from 1
     * @param index   the GID index
     * @return the entry
     * @throws VerbsException as for {@link #queryGid}
     */
    GidEntry queryGidEntry(int portNum, int index);

    /**
     * {@code ibv_query_pkey}: one entry of a port's P_Key table.
     *
     * @param portNum the port, from 1
     * @param index   the P_Key index, 0 to {@link PortAttr#pkeyTblLen()} - 1
     * @return the 16-bit P_Key, e.g. 0xffff for the default partition
     * @throws VerbsException EINVAL for a bad port or index
     */
    int queryPkey(int portNum, int index);

    /**
     * {@code ibv_alloc_pd}: a new protection domain.
     *
     * @return the PD; close it ({@code ibv_dealloc_pd}) after everything made in it
     * @throws VerbsException past the device's {@code max_pd} (EINVAL on the soft device, as rxe; the
     *     driver's errno on the native provider)
     */
    ProtectionDomain allocPd();

    /**
     * {@code ibv_create_comp_channel}: a channel CQs can deliver completion events to.
     *
     * @return the channel; close it ({@code ibv_destroy_comp_channel}) after its CQs
     */
    CompletionChannel createCompletionChannel();

    /**
     * {@code ibv_create_cq} (S-CQ-1).
     *
     * @param cqe        the minimum number of entries, 1 to {@link DeviceAttr#maxCqe()}; the CQ may get
     *                   more ({@link CompletionQueue#cqe()})
     * @param channel    the channel completion events go to after {@link CompletionQueue#reqNotify}, or
     *                   null for none
     * @param compVector the completion vector, 0 to {@link DeviceAttr#numCompVectors()} - 1
     * @return the CQ; close it ({@code ibv_destroy_cq}) after its QPs
     * @throws VerbsException EINVAL for {@code cqe} 0 or above the maximum, or a bad completion vector
     */
    CompletionQueue createCq(int cqe, CompletionChannel channel, int compVector);

    /**
     * {@code ibv_create_cq} without a channel, on completion vector 0.
     *
     * @param cqe the minimum number of entries, 1 to {@link DeviceAttr#maxCqe()}
     * @return the CQ
     * @throws VerbsException as for {@link #createCq(int, CompletionChannel, int)}
     */
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
     *
     * @param timeoutMs how long to wait in milliseconds; 0 = do not wait, negative = until an event comes
     * @return the event (acknowledge it with {@link #ackAsyncEvent}), or null after the timeout
     * @throws InterruptedException if the waiting thread is interrupted
     */
    AsyncEvent getAsyncEvent(long timeoutMs) throws InterruptedException;

    /**
     * True when an asynchronous event is queued ({@code poll(2)} on {@code async_fd} reporting
     * {@code POLLIN}); false once closed.
     *
     * @return whether {@link #getAsyncEvent getAsyncEvent(0)} would return an event now, unless another
     *     thread takes it first
     */
    boolean hasAsyncEvent();

    /**
     * A new {@link EventPoller} that waits on this provider's completion channels and asynchronous
     * event queues together (this context's and other contexts' of the same provider).
     *
     * @return the poller; it is independent of this context and closed on its own
     */
    EventPoller createEventPoller();

    /**
     * {@code ibv_ack_async_event}: acknowledges an event got from {@link #getAsyncEvent}. Acknowledge
     * every event of a QP, CQ or SRQ before closing it: on every provider closing one with
     * unacknowledged events fails with EBUSY (where {@code ibv_destroy_*} would wait for ever), and
     * acknowledging an event of one that is not outstanding (never returned, or acknowledged already) is
     * EINVAL (S-LIFE-6). Port and device events need no acknowledgement; acknowledging one does nothing.
     * Closing the context forgets every count.
     *
     * @param event the event, as {@link #getAsyncEvent} returned it
     * @throws VerbsException EINVAL when no event of the event's QP, CQ or SRQ is outstanding
     */
    void ackAsyncEvent(AsyncEvent event);

    /**
     * Port counters in the spirit of {@code /sys/class/infiniband/DEV/ports/N/hw_counters}: a
     * snapshot, names as keys. rdma4j's own. The soft device reports its engine's and link's counters
     * (retransmissions, NAKs, drops, ...); the native provider reads the port's {@code counters} and
     * {@code hw_counters} files (a {@code hw_counters} name that clashes gets the prefix "hw_").
     *
     * @param portNum the port, from 1
     * @return a new map of counter name to value; empty when the device has none
     */
    Map<String, Long> counters(int portNum);

    /**
     * The same counters with a name and a type each, in groups (traffic, retries, drops): a counter this
     * device does not keep is {@link PortCounters#ABSENT}. {@link PortCountersJmx#register} shows
     * them over JMX.
     *
     * @param portNum the port, from 1
     * @return the typed view of {@link #counters(int)} read now
     */
    default PortCounters portCounters(int portNum) {
        return PortCounters.of(counters(portNum));
    }
}
