// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetSocketAddress;
import java.util.Objects;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QueuePair;

/**
 * A connection manager id (rdma_cm_id): an endpoint that is bound, resolved, listens or is connected,
 * whose events arrive on its {@link CmEventChannel}. The calls mirror rdma_cm's: they return at once,
 * throw {@link org.rdma4j.verbs.VerbsException} with the errno rdma_cm would set when the call itself is
 * wrong (EINVAL in the wrong state, EADDRINUSE, EBADF once closed), and report the outcome as an event.
 *
 * {@snippet :
 * // active side
 * id.resolveAddr(null, new InetSocketAddress(serverIp, 7174), 2000);   // -> ADDR_RESOLVED
 * id.resolveRoute(2000);                                               // -> ROUTE_RESOLVED
 * ProtectionDomain pd = id.context().allocPd();
 * CompletionQueue cq = id.context().createCq(16);
 * id.createQp(pd, new QpInitAttr(QpType.RC, cq, cq));
 * id.connect(new ConnParam().privateData(hello));                      // -> ESTABLISHED (or REJECTED, UNREACHABLE)
 * }
 *
 * <p>On a device whose provider has a connection manager of its own instead of QP1 (the native
 * provider: librdmacm, through {@link org.rdma4j.verbs.spi.CmProvider}) the id becomes that CM's id when
 * a bind or address resolution lands on the device; the calls and events stay the same.
 *
 * <p>Errors: a {@link org.rdma4j.verbs.VerbsException}'s message names the errno, then the step
 * ("bind to", "resolve address of", "connect to", "accept from", "disconnect from", ...) and the id's
 * peer address and port (its local ones when it has no peer), e.g. {@code EINVAL: connect: not possible
 * in state IDLE (resolve the address and the route first)}.
 *
 * <p>Lifetime: an id holds its port, its device context (shared by the connection manager's ids on the
 * device) and, while connecting or connected, the connection's protocol state, until {@link #close()};
 * its QP ({@link #createQp}) is the program's and outlives it until {@link #destroyQp()}. The CONNECT_REQUEST
 * of a listener brings a new id the program owns (accept, reject or close it).
 *
 * <p>Thread safe: every call takes the connection manager's lock; {@link #close()} is safe in every
 * state and from any thread. Events are posted by the connection manager's agent threads.
 */
public final class CmId implements AutoCloseable {
    /** rdma_cm's CMA_CM_RESPONSE_TIMEOUT: 4.096 us * 2^20, about 4.3 s. */
    public static final int DEFAULT_RESPONSE_TIMEOUT = 20;
    /** The Q_Key rdma_cm gives the QPs of RDMA_PS_UDP ids (RDMA_UDP_QKEY). */
    public static final int UDP_QKEY = 0x0123_4567;
    /** rdma_cm's CMA_MAX_CM_RETRIES. */
    public static final int DEFAULT_MAX_CM_RETRIES = 15;
    /** The QP's local ACK timeout exponent (4.096 us * 2^14, about 67 ms). */
    public static final int DEFAULT_ACK_TIMEOUT = 14;

    enum State {
        IDLE, ADDR_BOUND, ADDR_RESOLVED, ROUTE_RESOLVED, LISTEN,
        REQ_SENT, REQ_RCVD, REP_SENT, REP_RCVD, ESTABLISHED, DREQ_SENT, DREQ_RCVD, TIMEWAIT, DONE, DESTROYED
    }

    final PortSpace ps;
    volatile CmEventChannel channel;
    /** Set once when the id's device has a connection manager of its own: every call goes there. */
    volatile ProviderCmId provider;

    // everything below is guarded by CmEngine.INSTANCE.lock
    State state = State.IDLE;
    boolean userClosed;
    InetSocketAddress local;
    InetSocketAddress remote;
    Context context;
    String deviceName;
    int portNum;
    int gidIndex;
    Gid sgid;
    Gid dgid;
    CmAgent agent;
    QueuePair qp;
    boolean ownsPortBinding;
    int backlog;
    int pendingRequests;
    CmId listener;
    java.util.List<CmAgent> listenAgents = java.util.List.of();

    int responseTimeout = DEFAULT_RESPONSE_TIMEOUT;
    int maxCmRetries = DEFAULT_MAX_CM_RETRIES;
    int ackTimeout = DEFAULT_ACK_TIMEOUT;
    int minRnrTimer = 12;

    /** The connection's protocol state: communication IDs, PSNs, QPNs, the peer's values, retransmission. */
    final CmConnection conn = new CmConnection();
    /** The groups the id has joined (CmMulticast). */
    final java.util.List<CmMulticast.Join> joins = new java.util.ArrayList<>();

    private CmId(CmEventChannel channel, PortSpace ps) {
        this.channel = channel;
        this.ps = ps;
    }

    /**
     * Creates an id (rdma_create_id) on {@code channel}.
     *
     * @param channel where its events go
     * @param ps its port space (TCP for RC connections)
     * @return the id
     * @throws org.rdma4j.verbs.VerbsException EBADF when the channel is closed; EPROTONOSUPPORT for {@link PortSpace#IB}
     */
    public static CmId create(CmEventChannel channel, PortSpace ps) {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(ps, "ps");
        if (channel.isClosed()) {
            throw new org.rdma4j.verbs.VerbsException(org.rdma4j.verbs.Errno.EBADF, "create id: the event channel is closed");
        }
        if (ps == PortSpace.IB) {
            throw new org.rdma4j.verbs.VerbsException(org.rdma4j.verbs.Errno.EPROTONOSUPPORT,
                    "create id: RDMA_PS_IB ids are not implemented yet");
        }
        return new CmId(channel, ps);
    }

    static CmId child(CmId listener) {
        return new CmId(listener.channel, listener.ps);
    }

    /** {@return where the id's calls go: the device's own CM once it has taken the id, else the Java CM} */
    CmBackend backend() {
        ProviderCmId p = provider;
        return p != null ? p : EngineCmId.INSTANCE;
    }

    /**
     * Binds a source address (rdma_bind_addr): a wildcard address binds only the port; a specific one
     * also the device that owns it (EADDRNOTAVAIL if none). Port 0 picks a free port when needed.
     * EADDRINUSE when another id of the port space holds the port with an overlapping address.
     *
     * @param addr the address and port
     * @throws org.rdma4j.verbs.VerbsException EINVAL when the id is bound or resolved already, or the address unresolved; EADDRNOTAVAIL
     *     when no device has the address; EADDRINUSE when the port is taken; EBADF once closed
     */
    public void bindAddr(InetSocketAddress addr) {
        Objects.requireNonNull(addr, "addr");
        backend().bindAddr(this, addr);
    }

    /**
     * Resolves which local device and GID reach {@code dst} (rdma_resolve_addr); ADDR_RESOLVED, or
     * ADDR_ERROR. On RoCEv2 the destination GID is the IP address. With no source (and none bound) the
     * source is the one the host's route to {@code dst} uses, as the kernel chooses it, and the device
     * is the one with that address as a GID (a destination that is a local device's own address is
     * reached on that device). ADDR_ERROR's status: -ENETUNREACH/-EHOSTUNREACH when the host has no
     * route, -ENODEV when no device has the source address ({@link CmEvent#detail()} names it).
     *
     * @param src the source address, or null for the route's (or the bound one)
     * @param dst the destination address and port
     * @param timeoutMs bound on the resolution
     * @throws org.rdma4j.verbs.VerbsException EINVAL for an unresolved destination, a negative timeout or an id
     *     past ADDR_RESOLVED; EADDRNOTAVAIL/EADDRINUSE from binding {@code src}; EBADF once closed (the
     *     resolution's own failures come as ADDR_ERROR)
     */
    public void resolveAddr
(InetSocketAddress src, InetSocketAddress dst, int timeoutMs) {
        Objects.requireNonNull(dst, "dst");
        backend().resolveAddr(this, src, dst, timeoutMs);
    }

    /**
     * Resolves the path (rdma_resolve_route): on RoCE it follows from the GIDs, but the step and its
     * event (ROUTE_RESOLVED) stay, as programs written for rdma_cm expect them.
     *
     * @param timeoutMs bound on the resolution
     * @throws org.rdma4j.verbs.VerbsException EINVAL before ADDR_RESOLVED; EBADF once closed (a port that is
     *     down comes as ROUTE_ERROR, -ENODEV)
     */
    public void resolveRoute(int timeoutMs) {
        backend().resolveRoute(this, timeoutMs);
    }

    /**
     * Listens for connection requests (rdma_listen): each arrives as CONNECT_REQUEST with a new id.
     * Requests beyond {@code backlog} not yet taken from the channel are rejected (REJ reason 28).
     *
     * @param backlog how many requests may wait to be taken (0 or less: 1024)
     * @throws org.rdma4j.verbs.VerbsException EINVAL when the id is resolved or connected; ENODEV when no device can
     *     take connections (no QP1 and no connection manager of its own); EBADF once closed
     */
    public void listen(int backlog) {
        backend().listen(this, backlog);
    }

    /**
     * Creates the id's QP on its device (rdma_create_qp) and moves it to INIT; connect/accept move it on
     * to RTR and RTS, disconnect to ERROR. The id must be resolved (or be a CONNECT_REQUEST's id).
     *
     * @param pd a protection domain of the id's device ({@link #context()})
     * @param attr the QP's attributes (type RC)
     * @return the QP
     * @throws org.rdma4j.verbs.VerbsException EINVAL when the id is not on a device yet, has a QP, the PD is of
     *     another device or the type is not the port space's; the provider's errno when the QP cannot be
     *     made; EBADF once closed
     */
    public QueuePair createQp(ProtectionDomain pd, QpInitAttr attr) {
        Objects.requireNonNull(pd, "pd");
        Objects.requireNonNull(attr, "attr");
        return backend().createQp(this, pd, attr);
    }

    /**
     * Destroys the id's QP (rdma_destroy_qp), leaving the multicast groups it joined first; nothing if it
     * has none. The CQs and PD are the program's.
     *
     * @throws org.rdma4j.verbs.VerbsException the provider's errno when the QP cannot be destroyed
     */
    public void destroyQp() {
        backend().destroyQp(this);
    }

    /**
     * Connects (rdma_connect) after ROUTE_RESOLVED: sends a REQ and retransmits it within the response
     * timeout and max CM retries; ESTABLISHED, REJECTED, UNREACHABLE or CONNECT_ERROR follows.
     *
     * @param param connection parameters (private data up to {@value ConnParam#MAX_REQ_PRIVATE_DATA} bytes)
     * @throws org.rdma4j.verbs.VerbsException EINVAL before ROUTE_RESOLVED, with too much private data, or
     *     without a QP and {@link ConnParam#qpNum}; EBADF once closed (the peer's answer comes as an event)
     */
    public void connect(ConnParam param) {
        Objects.requireNonNull(param, "param");
        backend().connect(this, param);
        CmLog.connecting(this);
    }

    /**
     * Accepts a CONNECT_REQUEST (rdma_accept): moves the QP to RTR and RTS with the request's values and
     * sends the REP; ESTABLISHED follows when the RTU arrives.
     *
     * @param param connection parameters (private data up to {@value ConnParam#MAX_REP_PRIVATE_DATA} bytes)
     * @throws org.rdma4j.verbs.VerbsException EINVAL unless the id is a CONNECT_REQUEST's not yet answered,
     *     with too much private data, or without a QP and {@link ConnParam#qpNum}; the provider's errno when
     *     the QP cannot be moved to RTS; EBADF once closed
     */
    public void accept(ConnParam param) {
        Objects.requireNonNull(param, "param");
        backend().accept(this, param);
        CmLog.answering(this, true);
    }

    /**
     * Rejects a CONNECT_REQUEST (rdma_reject): the peer sees REJECTED with status 28 (consumer defined)
     * and this private data.
     *
     * @param privateData up to {@value ConnParam#MAX_REJ_PRIVATE_DATA} bytes, or null
     * @throws org.rdma4j.verbs.VerbsException EINVAL unless the id is a CONNECT_REQUEST's not yet answered, or
     *     with too much private data; EBADF once closed
     */
    public void reject(byte[] privateData) {
        backend().reject(this, privateData == null ? new byte[0] : privateData.clone());
        CmLog.answering(this, false);
    }

    /**
     * The attributes that move a QP this program created itself to {@code state} for this id's connection
     * (rdma_init_qp_attr), with {@link QpAttr#mask()} saying which are set: pass it to
     * {@link QueuePair#modify(QpAttr)}. For an id without a QP of its own ({@link #createQp} not called):
     * create the QP on the id's {@link #context()}, connect or accept with {@link ConnParam#qpNum}, move the
     * QP through INIT, RTR and RTS with these attributes (the passive side before {@link #accept}, the active
     * side after CONNECT_RESPONSE, then {@link #establish}), and to ERROR before {@link #disconnect}.
     *
     * @param state {@link QpState#INIT} (once the id is on a device), {@link QpState#RTR} or
     *     {@link QpState#RTS} (once the connection's values are known: a CONNECT_REQUEST's id, or after
     *     CONNECT_RESPONSE)
     * @return new attributes
     * @throws org.rdma4j.verbs.VerbsException EINVAL in another state, or for another target state
     */
    public QpAttr initQpAttr(QpState state) {
        Objects.requireNonNull(state, "state");
        return backend().initQpAttr(this, state);
    }

    /**
     * Sends the RTU after CONNECT_RESPONSE when the id has no QP of its own (rdma_establish).
     *
     * @throws org.rdma4j.verbs.VerbsException EINVAL unless CONNECT_RESPONSE came and establish was not called;
     *     EBADF once closed
     */
    public void establish() {
        backend().establish(this);
    }

    /**
     * Disconnects (rdma_disconnect): moves the QP to ERROR (outstanding work requests flush) and sends a
     * DREQ, or, after the peer's DREQ (DISCONNECTED has come), the DREP that answers it. As with the
     * kernel's CM, both sides disconnect: the side that receives a DREQ gets DISCONNECTED at once, but its
     * QP stays as it is and the peer waits for the DREP until this side calls disconnect (or closes the
     * id); a peer that never answers gets DISCONNECTED with -ETIMEDOUT after its DREQ's retries.
     * TIMEWAIT_EXIT follows later. Nothing when already disconnected.
     *
     * @throws org.rdma4j.verbs.VerbsException EINVAL before the connection is set up (no REP sent or received);
     *     EBADF once closed
     */
    public void disconnect() {
        backend().disconnect(this);
    }

    /**
     * Joins a multicast group as a full member (rdma_join_multicast): {@link CmEventType#MULTICAST_JOIN}
     * follows with what a sender needs ({@link CmEvent#ahAttr()}: the group's MGID as the GRH's
     * destination; {@link CmEvent#qkey()}; {@link CmEvent#param()}{@code .qpNum()} 0xFFFFFF) and
     * {@code context} ({@link CmEvent#context()}); by then the id's QP, if it has one, is attached to the
     * group. On RoCE the MGID is the group's address (an IPv4 group as ::ffff:a.b.c.d). The id must be a
     * UD id (RDMA_PS_UDP) bound to a device (bindAddr to a local address, or resolveAddr); EINVAL
     * otherwise or when {@code group} is not a multicast address of the id's IP version, EADDRINUSE when
     * it joined the group already, EBADF once closed. A QP created after the join is not attached (as
     * with librdmacm): create it first.
     *
     * @param group the group's address (the port, if any, is ignored)
     * @param context given back with the join's events
     * @throws org.rdma4j.verbs.VerbsException as described above
     */
    public void joinMulticast(InetSocketAddress group, Object context) {
        Objects.requireNonNull(group, "group");
        if (group.isUnresolved()) {
            throw new org.rdma4j.verbs.VerbsException(org.rdma4j.verbs.Errno.EINVAL, "join multicast group " + group + ": unresolved");
        }
        joinMulticast(group.getAddress(), MulticastJoinFlag.FULL_MEMBER, context);
    }

    /**
     * As {@link #joinMulticast(InetSocketAddress, Object)}.
     *
     * @param group the group
     * @param context given back
     */
    public void joinMulticast(java.net.InetAddress group, Object context) {
        joinMulticast(group, MulticastJoinFlag.FULL_MEMBER, context);
    }

    /**
     * Joins a multicast group (rdma_join_multicast_ex with a join flag): as
     * {@link #joinMulticast(InetSocketAddress, Object)}, but a {@link MulticastJoinFlag#SEND_ONLY_FULL_MEMBER}
     * does not attach the QP (it only sends to the group).
     *
     * @param group the group's address
     * @param flag full or send-only member
     * @param context given back with the join's events
     */
    public void joinMulticast(java.net.InetAddress group, MulticastJoinFlag flag, Object context) {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(flag, "flag");
        backend().joinMulticast(this, group, flag, context);
    }

    /**
     * Leaves a group (rdma_leave_multicast): the QP is detached from it; EADDRNOTAVAIL when the id has not
     * joined it. {@link #close()} and {@link #destroyQp()} leave every group.
     *
     * @param group the group's address (the port, if any, is ignored)
     * @throws org.rdma4j.verbs.VerbsException EADDRNOTAVAIL when the id has not joined it; EINVAL for an
     *     unresolved group; EBADF once closed
     */
    public void leaveMulticast(InetSocketAddress group) {
        Objects.requireNonNull(group, "group");
        if (group.isUnresolved()) {
            throw new org.rdma4j.verbs.VerbsException(org.rdma4j.verbs.Errno.EINVAL, "leave multicast group " + group + ": unresolved");
        }
        leaveMulticast(group.getAddress());
    }

    /**
     * As {@link #leaveMulticast(InetSocketAddress)}.
     *
     * @param group the group
     */
    public void leaveMulticast(java.net.InetAddress group) {
        Objects.requireNonNull(group, "group");
        backend().leaveMulticast(this, group);
    }

    /**
     * Sets the CM response timeout exponent (4.096 us * 2^t) used for this id's REQ/REP/DREQ
     * retransmissions and announced in its REQ (the REQ's Local and Remote CM Response Timeout). The
     * kernel's rdma_cm fixes it (CMA_CM_RESPONSE_TIMEOUT, 20: about 4.3 s) and librdmacm has no option for
     * it. Before connect or listen.
     *
     * @param exponent 0..31
     * @throws org.rdma4j.verbs.VerbsException EINVAL outside 0..31; EBADF once closed
     */
    public void setResponseTimeout(int exponent) {
        CmEngine.INSTANCE.setOption(this, 0, exponent, 31);
    }

    /**
     * Sets how many times a REQ/REP/DREQ is sent again before the peer counts as unreachable (the REQ's
     * Max CM Retries; the kernel's CMA_MAX_CM_RETRIES, 15, which librdmacm cannot change).
     *
     * @param retries 0..15
     * @throws org.rdma4j.verbs.VerbsException EINVAL outside 0..15; EBADF once closed
     */
    public void setMaxCmRetries(int retries) {
        CmEngine.INSTANCE.setOption(this, 1, retries, 15);
    }

    /**
     * Sets the QP's local ACK timeout exponent (rdma_set_option with RDMA_OPTION_ID_ACK_TIMEOUT; the REQ's
     * Primary Local ACK Timeout).
     *
     * @param exponent 0..31
     * @throws org.rdma4j.verbs.VerbsException EINVAL outside 0..31; EBADF once closed
     */
    public void setAckTimeout(int exponent) {
        CmEngine.INSTANCE.setOption(this, 2, exponent, 31);
        backend().setAckTimeout(this, exponent);
    }

    /**
     * Sets the QP's minimum RNR NAK timer code (rdma_set_min_rnr_timer; default 12, 0.64 ms).
     *
     * @param code 0..31
     * @throws org.rdma4j.verbs.VerbsException EINVAL outside 0..31; EBADF once closed
     */
    public void setMinRnrTimer(int code) {
        CmEngine.INSTANCE.setOption(this, 3, code, 31);
    }

    /**
     * {@return the device context of the id once bound to a device (id->verbs), else null}: allocate the
     * QP's PD and CQs on it. The connection manager owns it (shared by every id on the device): do not
     * close it.
     */
    public Context context() {
        return backend().context(this);
    }

    /** {@return the port number on the device ({@code id->port_num}), 0 while unbound} */
    public int portNum() {
        return backend().portNum(this);
    }

    /** {@return the id's QP ({@code id->qp}), or null} */
    public QueuePair qp() {
        return backend().qp(this);
    }

    /**
     * Moves the id to another event channel (rdma_migrate_id): its later events go there, and those
     * queued on the old channel and not yet taken move with it, in order. A CONNECT_REQUEST about the id
     * stays where it is (it belongs to the listener).
     *
     * @param to the new channel
     * @throws org.rdma4j.verbs.VerbsException EBADF when {@code to} is closed or the id destroyed
     */
    public void migrate(CmEventChannel to) {
        Objects.requireNonNull(to, "to");
        CmEngine.INSTANCE.migrate(this, to);
    }

    /** {@return the channel the id's events go to ({@code id->channel})} */
    public CmEventChannel channel() {
        return channel;
    }

    /** {@return the port space ({@code id->ps})} */
    public PortSpace portSpace() {
        return ps;
    }

    /** {@return the local address and port ({@code rdma_get_local_addr}, {@code rdma_get_src_port}), or null} */
    public InetSocketAddress localAddress() {
        return backend().localAddress(this);
    }

    /** {@return the peer's address and port ({@code rdma_get_peer_addr}, {@code rdma_get_dst_port}), or null} */
    public InetSocketAddress remoteAddress() {
        return backend().remoteAddress(this);
    }

    /** {@return the source GID ({@code id->route.addr.addr.ibaddr.sgid}), or null while unresolved} */
    public Gid sourceGid() {
        return backend().sourceGid(this);
    }

    /** {@return the destination GID ({@code id->route.addr.addr.ibaddr.dgid}), or null} */
    public Gid destinationGid() {
        return backend().destinationGid(this);
    }

    /**
     * {@return the CM messages this process's connection manager dropped, by message (REQ, MRA, REJ, REP,
     * RTU, DREQ, DREP, SIDR_REQ, SIDR_REP, LAP, APR, OTHER)}: those that did not match everything the
     * connection they name must match (both communication IDs, or ours where the peer's is not known yet;
     * the QPN a DREQ names; the peer's GID), forged or stale, and LAP/APR, which are not offered.
     */
    public static java.util.Map<String, Long> droppedMessages() {
        return CmEngine.INSTANCE.auth.dropped();
    }

    /** {@return whether {@link #close()} was called} */
    public boolean isClosed() {
        return CmEngine.INSTANCE.read(() -> userClosed);
    }

    /**
     * Destroys the id (rdma_destroy_id), safe in every state: a pending connection is rejected (REJ),
     * an established one is disconnected (one DREQ; the QP moves to ERROR), a peer's DREQ is answered
     * (DREP), a listener stops listening. The id gives back its device at once, in every state (nothing
     * lingers in time wait), so the device can be closed or removed next. The id's QP is not destroyed
     * (rdma_destroy_qp is separate). No more events come for it; a listener's CONNECT_REQUESTs not yet
     * taken go with it (their ids are destroyed, their peers get a REJ). Idempotent.
     */
    @Override
    public void close() {
        CmEngine.INSTANCE.destroy(this);
        backend().closed(this);
        channel.dropRequestsOf(this);
    }

    @Override
    public String toString() {
        return backend().describe(this);
    }
}
