// SPDX-License-Identifier: Apache-2.0
/**
 * RDMA verbs for Java: the libibverbs API, object for object and call for call, with one meaning on
 * every provider (the soft RoCEv2 device written in Java, the native provider on libibverbs). The
 * contract every provider keeps is {@code docs/SEMANTICS.md}; its rule ids ({@code S-QP-2}, ...) are
 * cited where a method follows one.
 *
 * <h2>Object model</h2>
 * The objects and their parents are those of libibverbs:
 * <pre>
 * {@link Verbs}                           discovery: providers, devices, device creation
 *  └ {@link Device}                       struct ibv_device
 *     └ {@link Context}                   struct ibv_context (an open device)
 *        ├ {@link CompletionChannel}      struct ibv_comp_channel
 *        ├ {@link CompletionQueue}        struct ibv_cq (optionally on a channel)
 *        ├ {@link EventPoller}            poll(2) over channels and async event queues
 *        └ {@link ProtectionDomain}       struct ibv_pd
 *           ├ {@link MemoryRegion}        struct ibv_mr
 *           ├ {@link MemoryWindow}        struct ibv_mw (bound to an MR)
 *           ├ {@link SharedReceiveQueue}  struct ibv_srq
 *           ├ {@link AddressHandle}       struct ibv_ah (UD destinations)
 *           └ {@link QueuePair}           struct ibv_qp (uses CQs, optionally an SRQ)
 * </pre>
 * Work is described by reusable, caller-owned value objects: {@link SendWorkRequest}
 * and {@link RecvWorkRequest} (posted), {@link WorkCompletion}
 * (filled by polling), {@link QpAttr} / {@link QpInitAttr} (QP
 * attributes). Flags are plain {@code int} bit sets as in C ({@link Access},
 * {@link SendFlag}, {@link QpAttrMask}, ...); enums stand for C enums
 * whose values are exclusive, each with the C value ({@code value()}).
 *
 * <p>Besides the raw verbs, rdma4j has a guided path to a connected queue pair that picks the
 * attribute masks from the IBTA state table: {@link ProtectionDomain#queuePair},
 * {@link QueuePairBuilder}, {@link PreparedQueuePair} and the
 * endpoint the peers exchange, {@link QpEndpoint}; and polling helpers that need no
 * loop of the caller's ({@link CqPoller}, {@link IdleStrategy}).
 *
 * <h2>Lifetimes</h2>
 * Every object made by a verb is a {@link VerbsResource}: {@code close()} is the
 * matching destroy/dealloc/dereg call. The rules (SEMANTICS S-LIFE-4):
 * <ul>
 * <li>{@code close()} is idempotent. A parent that is still used refuses to close with a
 *     {@link VerbsException} EBUSY naming its users, as libibverbs does: a context with
 *     PDs, CQs or channels; a PD with MRs, MWs, QPs, SRQs or AHs; a CQ with QPs; a channel with CQs; an
 *     SRQ with QPs; an MR with a bound window; a QP with multicast attachments; a CQ with unacknowledged
 *     events. Close children first: try-with-resources in creation order does it.</li>
 * <li>A closed object refuses use with {@link java.lang.IllegalStateException} (posting included), except
 *     the blocking calls ({@link CompletionChannel#getEvent},
 *     {@link Context#getAsyncEvent}, {@link EventPoller#poll}): they
 *     throw {@link VerbsException} EBADF, also in threads that were waiting when the
 *     close came (S-LIFE-2).</li>
 * <li>A create racing the close of its parent either wins (and the close fails EBUSY) or fails and
 *     leaves nothing behind.</li>
 * <li>Events of a destroyed object are not delivered after the destroy (S-LIFE-3).</li>
 * <li>Registered memory must be native memory (an {@link java.lang.foreign.Arena}'s segment or memory
 *     the program mapped); a heap segment is refused EINVAL on every provider (S-MR-5). Keep the arena
 *     open until the region is closed: see {@link ProtectionDomain#regMr} for what
 *     each provider does with memory freed under a registration.</li>
 * </ul>
 *
 * <h2>Errors</h2>
 * A refused verb throws {@link VerbsException} carrying the errno a C program would
 * get from the same call ({@link Errno}); a refused post throws
 * {@link PostException}, which names the first work request not posted, as
 * {@code bad_wr} does. What goes wrong after a post is reported by the work completion's
 * {@link WcStatus}, and what goes wrong without a work request (a CQ overflow, a port
 * going down) by an {@link AsyncEvent}. Malformed values given to the value classes
 * of this package (a 17-byte GID, an endpoint string that does not parse) throw
 * {@link java.lang.IllegalArgumentException}.
 *
 * <h2>Threads and allocation</h2>
 * Devices, contexts and every resource are thread safe: two threads may post to one QP, poll one CQ
 * (serialised) or close what another uses. The value objects (work requests, work completions,
 * attribute objects, {@link CqPoller}) are not: one thread owns each. Posting and
 * polling allocate nothing when the caller reuses its work requests and completion slots.
 *
 * <h2>libibverbs to rdma4j</h2>
 * <table class="striped">
 * <caption>libibverbs calls and their rdma4j counterparts</caption>
 * <thead><tr><th scope="col">libibverbs</th><th scope="col">rdma4j</th></tr></thead>
 * <tbody>
 * <tr><td>{@code ibv_get_device_list}, {@code ibv_free_device_list}</td>
 *     <td>{@link Verbs#devices()} (a plain list; nothing to free)</td></tr>
 * <tr><td>{@code ibv_get_device_name}, {@code ibv_get_device_guid}</td>
 *     <td>{@link Device#name()}, {@link Device#guid()}</td></tr>
 * <tr><td>{@code ibv_open_device}, {@code ibv_close_device}</td>
 *     <td>{@link Device#open()} (or {@link Verbs#open(String)}),
 *     {@link Context#close()}</td></tr>
 * <tr><td>{@code ibv_query_device}, {@code ibv_query_port}</td>
 *     <td>{@link Context#queryDevice()}, {@link Context#queryPort(int)}</td></tr>
 * <tr><td>{@code ibv_query_gid}, {@code ibv_query_gid_ex}, {@code ibv_query_pkey}</td>
 *     <td>{@link Context#queryGid}, {@link Context#queryGidEntry},
 *     {@link Context#queryPkey}</td></tr>
 * <tr><td>{@code ibv_get_async_event}, {@code ibv_ack_async_event}</td>
 *     <td>{@link Context#getAsyncEvent(long)}, {@link Context#ackAsyncEvent}</td></tr>
 * <tr><td>{@code ibv_alloc_pd}, {@code ibv_dealloc_pd}</td>
 *     <td>{@link Context#allocPd()}, {@link ProtectionDomain#close()}</td></tr>
 * <tr><td>{@code ibv_reg_mr}, {@code ibv_rereg_mr}, {@code ibv_dereg_mr}</td>
 *     <td>{@link ProtectionDomain#regMr}, {@link MemoryRegion#rereg},
 *     {@link MemoryRegion#close()}</td></tr>
 * <tr><td>{@code ibv_alloc_mw}, {@code ibv_bind_mw}, {@code ibv_inc_rkey}, {@code ibv_dealloc_mw}</td>
 *     <td>{@link ProtectionDomain#allocMw(MwType)}, {@link MemoryWindow#bind},
 *     {@link MemoryWindow#nextRkey()}, {@link MemoryWindow#close()}</td></tr>
 * <tr><td>{@code ibv_create_comp_channel}, {@code ibv_destroy_comp_channel}</td>
 *     <td>{@link Context#createCompletionChannel()}, {@link CompletionChannel#close()}</td></tr>
 * <tr><td>{@code ibv_create_cq}, {@code ibv_resize_cq}, {@code ibv_destroy_cq}</td>
 *     <td>{@link Context#createCq(int, CompletionChannel, int)},
 *     {@link CompletionQueue#resize(int)}, {@link CompletionQueue#close()}</td></tr>
 * <tr><td>{@code ibv_poll_cq}, {@code ibv_req_notify_cq}</td>
 *     <td>{@link CompletionQueue#poll(WorkCompletion[])},
 *     {@link CompletionQueue#reqNotify(boolean)}</td></tr>
 * <tr><td>{@code ibv_get_cq_event}, {@code ibv_ack_cq_events}</td>
 *     <td>{@link CompletionChannel#getEvent(long)}, {@link CompletionQueue#ackEvents(int)}</td></tr>
 * <tr><td>{@code poll(2)} on {@code channel->fd} and {@code context->async_fd}</td>
 *     <td>{@link EventPoller}, {@link CompletionChannel#hasEvent()},
 *     {@link Context#hasAsyncEvent()}</td></tr>
 * <tr><td>{@code ibv_create_qp}, {@code ibv_modify_qp}, {@code ibv_query_qp}, {@code ibv_destroy_qp}</td>
 *     <td>{@link ProtectionDomain#createQp}, {@link QueuePair#modify(QpAttr, int)},
 *     {@link QueuePair#query(QpAttr, QpInitAttr)}, {@link QueuePair#close()}</td></tr>
 * <tr><td>{@code ibv_post_send}, {@code ibv_post_recv}</td>
 *     <td>{@link QueuePair#postSend}, {@link QueuePair#postRecv}</td></tr>
 * <tr><td>{@code ibv_attach_mcast}, {@code ibv_detach_mcast}</td>
 *     <td>{@link QueuePair#attachMcast}, {@link QueuePair#detachMcast}</td></tr>
 * <tr><td>{@code ibv_create_srq}, {@code ibv_modify_srq}, {@code ibv_query_srq}, {@code ibv_post_srq_recv},
 *     {@code ibv_destroy_srq}</td>
 *     <td>{@link ProtectionDomain#createSrq}, {@link SharedReceiveQueue#modify},
 *     {@link SharedReceiveQueue#query()}, {@link SharedReceiveQueue#postRecv},
 *     {@link SharedReceiveQueue#close()}</td></tr>
 * <tr><td>{@code ibv_create_ah}, {@code ibv_init_ah_from_wc}, {@code ibv_create_ah_from_wc},
 *     {@code ibv_destroy_ah}</td>
 *     <td>{@link ProtectionDomain#createAh}, {@link AhAttr#fromWc},
 *     {@link ProtectionDomain#createAhFromWc}, {@link AddressHandle#close()}</td></tr>
 * <tr><td>{@code ibv_wc_status_str}</td><td>{@link WcStatus#description()}</td></tr>
 * <tr><td>{@code struct ibv_send_wr}, {@code ibv_recv_wr}, {@code ibv_sge}</td>
 *     <td>{@link SendWorkRequest}, {@link RecvWorkRequest},
 *     {@link ScatterGatherList}</td></tr>
 * <tr><td>{@code struct ibv_wc}</td><td>{@link WorkCompletion}</td></tr>
 * <tr><td>{@code struct ibv_qp_attr}, {@code ibv_qp_init_attr}, {@code ibv_qp_cap}</td>
 *     <td>{@link QpAttr}, {@link QpInitAttr}, {@link QpCap}</td></tr>
 * <tr><td>{@code struct ibv_ah_attr}, {@code ibv_global_route}, {@code union ibv_gid}</td>
 *     <td>{@link AhAttr}, {@link GlobalRoute}, {@link Gid}</td></tr>
 * <tr><td>{@code struct ibv_device_attr}, {@code ibv_port_attr}, {@code ibv_gid_entry}</td>
 *     <td>{@link DeviceAttr}, {@link PortAttr}, {@link GidEntry}</td></tr>
 * <tr><td>{@code struct ibv_srq_attr}, {@code ibv_async_event}</td>
 *     <td>{@link SrqAttr}, {@link AsyncEvent}</td></tr>
 * </tbody>
 * </table>
 *
 * <p>rdma4j's own additions have no libibverbs counterpart: device creation from a spec
 * ({@link Verbs#createDevice(String)}, {@link DeviceSpec}), port
 * counters as a map ({@link Context#counters(int)}), the guided bring-up and the
 * pollers named above.
 *
 * {@snippet :
 * try (Context ctx = Verbs.open("soft0");
 *      ProtectionDomain pd = ctx.allocPd();
 *      CompletionQueue cq = ctx.createCq(64);
 *      Arena arena = Arena.ofShared()) {
 *     MemoryRegion mr = pd.regMr(arena.allocate(4096), Access.LOCAL_WRITE);
 *     try (PreparedQueuePair a = pd.queuePair(QpType.RC, cq).prepare();
 *          PreparedQueuePair b = pd.queuePair(QpType.RC, cq).prepare()) {
 *         QueuePair qa = a.handshake(b.endpoint());
 *         QueuePair qb = b.handshake(a.endpoint());
 *         qb.postRecv(new RecvWorkRequest().wrId(2).sge(mr, 2048, 2048));
 *         qa.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(mr, 0, 64));
 *         CqPoller completions = new CqPoller(cq);
 *         completions.takeSuccess(1_000_000_000L);   // the send and the receive, in either order
 *         completions.takeSuccess(1_000_000_000L);
 *     } finally {
 *         mr.close();
 *     }
 * }
 * }
 */
package org.rdma4j.verbs;
