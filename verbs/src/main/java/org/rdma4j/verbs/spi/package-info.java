// SPDX-License-Identifier: Apache-2.0
/**
 * The service provider interface: what a module implements to offer RDMA devices through
 * {@link org.rdma4j.verbs.Verbs}, and the provider-neutral rules every provider applies so that the
 * API means the same on each (docs/SEMANTICS.md). Applications do not need this package, except a
 * connection manager built on verbs (the cm module), which uses {@link org.rdma4j.verbs.spi.GsiPort}
 * and {@link org.rdma4j.verbs.spi.CmProvider}.
 *
 * <h2>Being a provider</h2>
 * A provider module declares {@code provides org.rdma4j.verbs.spi.VerbsProvider with ...} (or a
 * {@code META-INF/services} entry on the class path). {@link org.rdma4j.verbs.Verbs} finds every
 * provider with {@link java.util.ServiceLoader}; one that cannot work here (no native library, no
 * kernel module) is still found and says why
 * ({@link org.rdma4j.verbs.spi.VerbsProvider#unavailabilityCause()}), so a user asking for its
 * device is told what is missing. The provider's
 * {@link org.rdma4j.verbs.Device}s open {@link org.rdma4j.verbs.Context}s, which implement the rest
 * of the {@code org.rdma4j.verbs} interfaces. This project has two: {@code soft} (a RoCEv2 device in
 * Java, in process or over UDP) and {@code native} (libibverbs through {@code java.lang.foreign}).
 *
 * <h2>What this package gives a provider</h2>
 * <table class="striped">
 * <caption>The SPI's building blocks</caption>
 * <thead>
 * <tr><th scope="col">Type</th><th scope="col">Job</th><th scope="col">libibverbs / kernel counterpart</th></tr>
 * </thead>
 * <tbody>
 * <tr><td>{@link org.rdma4j.verbs.spi.VerbsProvider}</td><td>the service: devices, availability,
 *     device creation</td><td>a libibverbs driver ({@code verbs_register_driver})</td></tr>
 * <tr><td>{@link org.rdma4j.verbs.spi.AbstractResource}</td><td>the lifetime rules of
 *     {@link org.rdma4j.verbs.VerbsResource}: EBUSY while used, idempotent close, use after close</td>
 *     <td>the uverbs object usecnt</td></tr>
 * <tr><td>{@link org.rdma4j.verbs.spi.AbstractContext}, {@link org.rdma4j.verbs.spi.AbstractProtectionDomain},
 *     {@link org.rdma4j.verbs.spi.AbstractPdResource}, {@link org.rdma4j.verbs.spi.AbstractQueuePair},
 *     {@link org.rdma4j.verbs.spi.AbstractCompletionQueue}, {@link org.rdma4j.verbs.spi.AbstractEventPoller}</td>
 *     <td>what every provider's resources share, so that none writes it again: the parents and their
 *     accessors, the open checks before a child is made, the checks of {@code ibv_create_qp}'s arguments,
 *     the count of unacknowledged CQ events, an event poller's registrations and results</td>
 *     <td>the ib_core side of {@code ib_alloc_pd}, {@code ib_create_qp}, {@code ib_uverbs_event_queue}</td></tr>
 * <tr><td>{@link org.rdma4j.verbs.spi.QpTransitions}</td><td>the IBTA QP state table: valid moves and
 *     their required and optional mask bits</td><td>{@code ib_modify_qp_is_ok}</td></tr>
 * <tr><td>{@link org.rdma4j.verbs.spi.QpAttrRanges}</td><td>value ranges of QP attributes and
 *     capacities</td><td>rxe's {@code rxe_qp_chk_attr}, {@code rxe_qp_chk_cap}</td></tr>
 * <tr><td>{@link org.rdma4j.verbs.spi.SendWrRules}</td><td>what a send work request may be, per QP
 *     type</td><td>rxe's {@code validate_send_wr}</td></tr>
 * <tr><td>{@link org.rdma4j.verbs.spi.MrAccessRules}, {@link org.rdma4j.verbs.spi.MrMemoryRules}</td>
 *     <td>what may be registered, with which rights</td><td>{@code ib_check_mr_access}</td></tr>
 * <tr><td>{@link org.rdma4j.verbs.spi.EventQueue}, {@link org.rdma4j.verbs.spi.QueueEventPoller}</td>
 *     <td>completion and asynchronous event queues kept in Java, and an
 *     {@link org.rdma4j.verbs.EventPoller} over them</td><td>{@code ib_uverbs_event_queue}, {@code poll(2)}</td></tr>
 * <tr><td>{@link org.rdma4j.verbs.spi.GsiPort}, {@link org.rdma4j.verbs.spi.GsiResponder}</td><td>a
 *     port's QP1 for management datagrams, and the stateless answer to MADs nobody receives</td>
 *     <td>{@code ib_mad}, {@code ib_cm}</td></tr>
 * <tr><td>{@link org.rdma4j.verbs.spi.CmProvider}</td><td>a device's own connection manager</td>
 *     <td>librdmacm ({@code rdma_cm})</td></tr>
 * </tbody>
 * </table>
 *
 * <p>Who applies the rules: every provider, before its device sees the call, so what one provider
 * refuses every provider refuses with the same errno. The native provider applies them with the
 * device's limits read once per context, then hands the call to the kernel, whose own checks remain
 * (a value these rules accept and a device cannot, e.g. a capacity above its queue sizes, is refused by
 * the kernel with its errno). Rules for behaviour only a device can tell (the IBTA state table's
 * RESET to ERR, which the kernel's table lacks) are met by the provider's own means. All classes here
 * are thread safe unless
 * their comment says otherwise. The subpackage
 * {@code org.rdma4j.verbs.spi.ffm} holds the {@code java.lang.foreign} plumbing and is exported to
 * this project's provider modules only.
 */
package org.rdma4j.verbs.spi;
