// SPDX-License-Identifier: Apache-2.0
/**
 * rdma4j's connection manager: librdmacm's model in Java, over the IB CM protocol (IBTA vol. 1 chapter
 * 12) spoken as MADs through a provider's {@link org.rdma4j.verbs.spi.GsiPort} (QP1), or through the
 * provider's own connection manager where it has one (the native provider: librdmacm).
 *
 * <h2>Three levels</h2>
 * <table class="striped">
 * <caption>The Java types and the C API they follow</caption>
 * <thead><tr><th>Java</th><th>librdmacm</th></tr></thead>
 * <tbody>
 * <tr><td>{@link org.rdma4j.cm.CmEventChannel}, {@link org.rdma4j.cm.CmEventChannel#getEvent}, {@link org.rdma4j.cm.CmEvent#ack()}</td>
 *     <td>{@code rdma_create_event_channel}, {@code rdma_get_cm_event}, {@code rdma_ack_cm_event}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.CmId} and its calls, {@link org.rdma4j.cm.CmEventType}</td>
 *     <td>{@code rdma_create_id}, {@code rdma_bind_addr}, {@code rdma_resolve_addr}, {@code rdma_resolve_route},
 *     {@code rdma_listen}, {@code rdma_connect}, {@code rdma_accept}, {@code rdma_reject}, {@code rdma_disconnect},
 *     {@code rdma_join_multicast}, {@code rdma_destroy_id}; {@code enum rdma_cm_event_type}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.AddrInfo}, {@link org.rdma4j.cm.Endpoint}</td>
 *     <td>{@code rdma_getaddrinfo}, {@code rdma_create_ep}, {@code rdma_get_request}, {@code rdma_reg_msgs},
 *     {@code rdma_post_send}/{@code _recv}/{@code _read}/{@code _write}, {@code rdma_get_send_comp}/{@code _recv_comp}</td></tr>
 * <tr><td>{@link org.rdma4j.cm.RdmaServer}, {@link org.rdma4j.cm.RdmaClient}, {@link org.rdma4j.cm.EndpointOptions}</td>
 *     <td>none: a {@code ServerSocket}/{@code Socket}-shaped front on {@code Endpoint}</td></tr>
 * </tbody>
 * </table>
 *
 * <p>A server thread and a client in one JVM on a loopback address, with no device set up beforehand
 * ({@link org.rdma4j.cm.SoftDevicePolicy#LOOPBACK}, the default, makes a soft RoCEv2 device on 127.0.0.1
 * when {@code rdma4j-soft} is on the path):
 * {@snippet :
 * try (Arena arena = Arena.ofShared();
 *      RdmaServer server = RdmaServer.listen(new InetSocketAddress("127.0.0.1", 7471), new EndpointOptions())) {
 *     MemorySegment buf = arena.allocate(4096);
 *     Thread.ofPlatform().start(() -> { ... server.accept(ep -> ep.postRecv(1, buf, ep.regMsgs(buf))) ... });
 *     try (Endpoint conn = RdmaClient.connect("127.0.0.1", 7471)) { ... conn.postSend(...) ... }
 * }
 * }
 *
 * <h2>Errors</h2>
 * A call that is wrong in itself throws {@link org.rdma4j.verbs.VerbsException} with the errno librdmacm
 * would set (EINVAL in the wrong state, EADDRINUSE, EADDRNOTAVAIL, EBADF once closed); the outcome of an
 * asynchronous step is an event whose {@link org.rdma4j.cm.CmEvent#status()} is rdma_cm's (a negative
 * errno, or a REJ reason). The synchronous levels turn a failed step into a {@code VerbsException} with
 * librdmacm's errno: ECONNREFUSED (rejected), ETIMEDOUT (unreachable, or not within the endpoint's
 * bound), ECONNRESET (the peer disconnected first), ENODEV (the device went away). Every message starts
 * with the errno's name, then names the step, the peer's address and port (the local ones for a step
 * without a peer) and any timeout in human units, e.g.
 * {@code ETIMEDOUT: connect to 192.0.2.7:7471 (local 192.0.2.1:40112): no ESTABLISHED within 30 s}.
 *
 * <h2>Threads and lifetimes</h2>
 * Every public type here is thread safe unless its documentation says otherwise ({@link
 * org.rdma4j.cm.ConnParam} and {@link org.rdma4j.cm.EndpointOptions} are plain value holders). Events are
 * delivered by the connection manager's agent threads (one per device port) onto the id's channel; the
 * program takes them on its own threads. An id lives until {@link org.rdma4j.cm.CmId#close()}, which is
 * safe in every state and gives back the device at once; an id's device context belongs to the
 * connection manager (never close it); the QP made by {@link org.rdma4j.cm.CmId#createQp} is the
 * program's to destroy ({@link org.rdma4j.cm.CmId#destroyQp()}), while an {@code Endpoint} releases
 * everything it made when it is closed. Nothing waits without a bound except {@link
 * org.rdma4j.cm.Endpoint#getRequest()} and {@link org.rdma4j.cm.RdmaServer#accept()}, which end when
 * their endpoint or server is closed (EBADF).
 */
package org.rdma4j.cm;
