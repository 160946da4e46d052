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
 * {@link org.rdma4j.verbs.Verbs}                     discovery: providers, devices, device creation
 *  └ {@link org.rdma4j.verbs.Device}                 struct ibv_device
 *     └ {@link org.rdma4j.verbs.Context}             struct ibv_context (an open device)
 *        ├ {@link org.rdma4j.verbs.CompletionChannel}  struct ibv_comp_channel
 *        ├ {@link org.rdma4j.verbs.CompletionQueue}    struct ibv_cq (optionally on a channel)
 *        ├ {@link org.rdma4j.verbs.EventPoller}        poll(2) over channels and async event queues
 *        └ {@link org.rdma4j.verbs.ProtectionDomain}   struct ibv_pd
 *           ├ {@link org.rdma4j.verbs.MemoryRegion}       struct ibv_mr
 *           ├ {@link org.rdma4j.verbs.MemoryWindow}       struct ibv_mw (bound to an MR)
 *           ├ {@link org.rdma4j.verbs.SharedReceiveQueue} struct ibv_srq
 *           ├ {@link org.rdma4j.verbs.AddressHandle}      struct ibv_ah (UD destinations)
 *           └ {@link org.rdma4j.verbs.QueuePair}          struct ibv_qp (uses CQs, optionally an SRQ)
 * </pre>
 * Work is described by reusable, caller-owned value objects: {@link org.rdma4j.verbs.SendWorkRequest}
 * and {@link org.rdma4j.verbs.RecvWorkRequest} (posted), {@link org.rdma4j.verbs.WorkCompletion}
 * (filled by polling), {@link org.rdma4j.verbs.QpAttr} / {@link org.rdma4j.verbs.QpInitAttr} (QP
 * attributes). Flags are plain {@code int} bit sets as in C ({@link org.rdma4j.verbs.Access},
 * {@link org.rdma4j.verbs.SendFlag}, {@link org.rdma4j.verbs.QpAttrMask}, ...); enums stand for C enums
 * whose values are exclusive, each with the C value ({@code value()}).
 *
 * <p>Besides the raw verbs, rdma4j has a guided path to a connected queue pair that picks the
 * attribute masks from the IBTA state table: {@link org.rdma4j.verbs.ProtectionDomain#queuePair},
 * {@link org.rdma4j.verbs.QueuePairBuilder}, {@link org.rdma4j.verbs.PreparedQueuePair} and the
 * endpoint the peers exchange, {@link org.rdma4j.verbs.QpEndpoint}; and polling helpers that need no
 * loop of the caller's ({@link org.rdma4j.verbs.CqPoller}, {@link org.rdma4j.verbs.IdleStrategy}).
 *
 * <h2>Lifetimes</h2>
 * Every object made by a verb is a {@link org.rdma4j.verbs.VerbsResource}: {@code close()} is the
 * matching destroy/dealloc/dereg call. The rules (SEMANTICS S-LIFE-4):
 * <ul>
 * <li>{@code close()} is idempotent. A parent that is still used refuses to close with a
 *     {@link org.rdma4j.verbs.VerbsException} EBUSY naming its users, as libibverbs does: a context with
 *     PDs, CQs or channels; a PD with MRs, MWs, QPs, SRQs or AHs; a CQ with QPs; a channel with CQs; an
 *     SRQ with QPs; an MR with a bound window; a QP with multicast attachments; a CQ with unacknowledged
 *     events. Close children first: try-with-resources in creation order does it.</li>
 * <li>A closed object refuses use with {@link java.lang.IllegalStateException} (posting included), except
 *     the blocking calls ({@link org.rdma4j.verbs.CompletionChannel#getEvent},
 *     {@link org.rdma4j.verbs.Context#getAsyncEvent}, {@link org.rdma4j.verbs.EventPoller#poll}): they
 *     throw {@link org.rdma4j.verbs.VerbsException} EBADF, also in threads that were waiting when the
 *     close came (S-LIFE-2).</li>
 * <li>A create racing the close of its parent either wins (and the close fails EBUSY) or fails and
 *     leaves nothing behind.</li>
 * <li>Events of a destroyed object are not delivered after the destroy (S-LIFE-3).</li>
 * <li>Registered memory must be native memory (an {@link java.lang.foreign.Arena}'s segment or memory
 *     the program mapped); a heap segment is refused EINVAL on every provider (S-MR-5). Keep the arena
 *     open until the region is closed: see {@link org.rdma4j.verbs.ProtectionDomain#regMr} for what
 *     each provider does with memory freed under a registration.</li>
 * </ul>
 *
 * <h2>Errors</h2>
 * A refused verb throws {@link org.rdma4j.verbs.VerbsException} carrying the errno a C program would
 * get from the same call ({@link org.rdma4j.verbs.Errno}); a refused post throws
 * {@link org.rdma4j.verbs.PostException}, which names the first work request not posted, as
 * {@code bad_wr} does. What goes wrong after a post is reported by the work completion's
 * {@link org.rdma4j.verbs.WcStatus}, and what goes wrong without a work request (a CQ overflow, a port
 * going down) by an {@link org.rdma4j.verbs.AsyncEvent}. Malformed values given to the value classes
 * of this package (a 17-byte GID, an endpoint string that does not parse) throw
 * {@link java.lang.IllegalArgumentException}.
 *
 * <h2>Threads and allocation</h2>
 * Devices, contexts and every resource are thread safe: two threads may post to one QP, poll one CQ
 * (serialised) or close what another uses. The value objects (work requests, work completions,
 * attribute objects, {@link org.rdma4j.verbs.CqPoller}) are not: one thread owns each. Posting and
 * polling allocate nothing when the caller reuses its work requests and completion slots.
 *
 * <h2>libibverbs to rdma4j</h2>
 * <table class="striped">
 * <caption>libibverbs calls and their rdma4j counterparts</caption>
 * <thead><tr><th scope="col">libibverbs</th><th scope="col">rdma4j</th></tr></thead>
 * <tbody>
 * <tr><td>{@code ibv_get_device_list}, {@code ibv_free_device_list}</td>
 *     <td>{@link org.rdma4j.verbs.Verbs#devices()} (a plain list; nothing to free)</td></tr>
 * <tr><td>{@code ibv_get_device_name}, {@code ibv_get_device_guid}</td>
 *     <td>{@link org.rdma4j.verbs.Device#name()}, {@link org.rdma4j.verbs.Device#guid()}</td></tr>
 * <tr><td>{@code ibv_open_device}, {@code ibv_close_device}</td>
 *     <td>{@link org.rdma4j.verbs.Device#open()} (or {@link org.rdma4j.verbs.Verbs#open(String)}),
 *     {@link org.rdma4j.verbs.Context#close()}</td></tr>
 * <tr><td>{@code ibv_query_device}, {@code ibv_query_port}</td>
 *     <td>{@link org.rdma4j.verbs.Context#queryDevice()}, {@link org.rdma4j.verbs.Context#queryPort(int)}</td></tr>
 * <tr><td>{@code ibv_query_gid}, {@code ibv_query_gid_ex}, {@code ibv_query_pkey}</td>
 *     <td>{@link org.rdma4j.verbs.Context#queryGid}, {@link org.rdma4j.verbs.Context#queryGidEntry},
 *     {@link org.rdma4j.verbs.Context#queryPkey}</td></tr>
 * <tr><td>{@code ibv_get_async_event}, {@code ibv_ack_async_event}</td>
 *     <td>{@link org.rdma4j.verbs.Context#getAsyncEvent(long)}, {@link org.rdma4j.verbs.Context#ackAsyncEvent}</td></tr>
 * <tr><td>{@code ibv_alloc_pd}, {@code ibv_dealloc_pd}</td>
 *     <td>{@link org.rdma4j.verbs.Context#allocPd()}, {@link org.rdma4j.verbs.ProtectionDomain#close()}</td></tr>
 * <tr><td>{@code ibv_reg_mr}, {@code ibv_rereg_mr}, {@code ibv_dereg_mr}</td>
 *     <td>{@link org.rdma4j.verbs.ProtectionDomain#regMr}, {@link org.rdma4j.verbs.MemoryRegion#rereg},
 *     {@link org.rdma4j.verbs.MemoryRegion#close()}</td></tr>
 * <tr><td>{@code ibv_alloc_mw}, {@code ibv_bind_mw}, {@code ibv_inc_rkey}, {@code ibv_dealloc_mw}</td>
 *     <td>{@link org.rdma4j.verbs.ProtectionDomain#allocMw(MwType)}, {@link org.rdma4j.verbs.MemoryWindow#bind},
 *     {@link org.rdma4j.verbs.MemoryWindow#nextRkey()}, {@link org.rdma4j.verbs.MemoryWindow#close()}</td></tr>
 * <tr><td>{@code ibv_create_comp_channel}, {@code ibv_destroy_comp_channel}</td>
 *     <td>{@link org.rdma4j.verbs.Context#createCompletionChannel()}, {@link org.rdma4j.verbs.CompletionChannel#close()}</td></tr>
 * <tr><td>{@code ibv_create_cq}, {@code ibv_resize_cq}, {@code ibv_destroy_cq}</td>
 *     <td>{@link org.rdma4j.verbs.Context#createCq(int, CompletionChannel, int)},
 *     {@link org.rdma4j.verbs.CompletionQueue#resize(int)}, {@link org.rdma4j.verbs.CompletionQueue#close()}</td></tr>
 * <tr><td>{@code ibv_poll_cq}, {@code ibv_req_notify_cq}</td>
 *     <td>{@link org.rdma4j.verbs.CompletionQueue#poll(WorkCompletion[])},
 *     {@link org.rdma4j.verbs.CompletionQueue#reqNotify(boolean)}</td></tr>
 * <tr><td>{@code ibv_get_cq_event}, {@code ibv_ack_cq_events}</td>
 *     <td>{@link org.rdma4j.verbs.CompletionChannel#getEvent(long)}, {@link org.rdma4j.verbs.CompletionQueue#ackEvents(int)}</td></tr>
 * <tr><td>{@code poll(2)} on {@code channel->fd} and {@code context->async_fd}</td>
 *     <td>{@link org.rdma4j.verbs.EventPoller}, {@link org.rdma4j.verbs.CompletionChannel#hasEvent()},
 *     {@link org.rdma4j.verbs.Context#hasAsyncEvent()}</td></tr>
 * <tr><td>{@code ibv_create_qp}, {@code ibv_modify_qp}, {@code ibv_query_qp}, {@code ibv_destroy_qp}</td>
 *     <td>{@link org.rdma4j.verbs.ProtectionDomain#createQp}, {@link org.rdma4j.verbs.QueuePair#modify(QpAttr, int)},
 *     {@link org.rdma4j.verbs.QueuePair#query(QpAttr, QpInitAttr)}, {@link org.rdma4j.verbs.QueuePair#close()}</td></tr>
 * <tr><td>{@code ibv_post_send}, {@code ibv_post_recv}</td>
 *     <td>{@link org.rdma4j.verbs.QueuePair#postSend}, {@link org.rdma4j.verbs.QueuePair#postRecv}</td></tr>
 * <tr><td>{@code ibv_attach_mcast}, {@code ibv_detach_mcast}</td>
 *     <td>{@link org.rdma4j.verbs.QueuePair#attachMcast}, {@link org.rdma4j.verbs.QueuePair#detachMcast}</td></tr>
 * <tr><td>{@code ibv_create_srq}, {@code ibv_modify_srq}, {@code ibv_query_srq}, {@code ibv_post_srq_recv},
 *     {@code ibv_destroy_srq}</td>
 *     <td>{@link org.rdma4j.verbs.ProtectionDomain#createSrq}, {@link org.rdma4j.verbs.SharedReceiveQueue#modify},
 *     {@link org.rdma4j.verbs.SharedReceiveQueue#query()}, {@link org.rdma4j.verbs.SharedReceiveQueue#postRecv},
 *     {@link org.rdma4j.verbs.SharedReceiveQueue#close()}</td></tr>
 * <tr><td>{@code ibv_create_ah}, {@code ibv_init_ah_from_wc}, {@code ibv_create_ah_from_wc}, {@code ibv_destroy_ah}</td>
 *     <td>{@link org.rdma4j.verbs.ProtectionDomain#createAh}, {@link org.rdma4j.verbs.AhAttr#fromWc},
 *     {@link org.rdma4j.verbs.ProtectionDomain#createAhFromWc}, {@link org.rdma4j.verbs.AddressHandle#close()}</td></tr>
 * <tr><td>{@code ibv_wc_status_str}</td><td>{@link org.rdma4j.verbs.WcStatus#description()}</td></tr>
 * <tr><td>{@code struct ibv_send_wr}, {@code ibv_recv_wr}, {@code ibv_sge}</td>
 *     <td>{@link org.rdma4j.verbs.SendWorkRequest}, {@link org.rdma4j.verbs.RecvWorkRequest},
 *     {@link org.rdma4j.verbs.ScatterGatherList}</td></tr>
 * <tr><td>{@code struct ibv_wc}</td><td>{@link org.rdma4j.verbs.WorkCompletion}</td></tr>
 * <tr><td>{@code struct ibv_qp_attr}, {@code ibv_qp_init_attr}, {@code ibv_qp_cap}</td>
 *     <td>{@link org.rdma4j.verbs.QpAttr}, {@link org.rdma4j.verbs.QpInitAttr}, {@link org.rdma4j.verbs.QpCap}</td></tr>
 * <tr><td>{@code struct ibv_ah_attr}, {@code ibv_global_route}, {@code union ibv_gid}</td>
 *     <td>{@link org.rdma4j.verbs.AhAttr}, {@link org.rdma4j.verbs.GlobalRoute}, {@link org.rdma4j.verbs.Gid}</td></tr>
 * <tr><td>{@code struct ibv_device_attr}, {@code ibv_port_attr}, {@code ibv_gid_entry}</td>
 *     <td>{@link org.rdma4j.verbs.DeviceAttr}, {@link org.rdma4j.verbs.PortAttr}, {@link org.rdma4j.verbs.GidEntry}</td></tr>
 * <tr><td>{@code struct ibv_srq_attr}, {@code ibv_async_event}</td>
 *     <td>{@link org.rdma4j.verbs.SrqAttr}, {@link org.rdma4j.verbs.AsyncEvent}</td></tr>
 * </tbody>
 * </table>
 *
 * <p>rdma4j's own additions have no libibverbs counterpart: device creation from a spec
 * ({@link org.rdma4j.verbs.Verbs#createDevice(String)}, {@link org.rdma4j.verbs.DeviceSpec}), port
 * counters as a map ({@link org.rdma4j.verbs.Context#counters(int)}), the guided bring-up and the
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
