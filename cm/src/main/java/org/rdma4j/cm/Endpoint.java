// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;

/**
 * librdmacm's convenience layer ({@code rdma_create_ep} and {@code rdma_verbs.h}): a synchronous
 * {@link CmId} with its QP, its send and receive CQs and their completion channels, and the
 * {@code rdma_post_*}/{@code rdma_get_*_comp} calls on it.
 *
 * <p>Synchronous as librdmacm's ids made without an event channel: the endpoint has a private
 * {@link CmEventChannel}, and {@link #connect}, {@link #accept}, {@link #getRequest} and
 * {@link #disconnect} return when their event has come, each wait bounded by {@link #timeout()}
 * (ETIMEDOUT past it; {@link #getRequest()} waits until a request comes or the endpoint is closed).
 * A failed step throws {@link VerbsException} with the errno librdmacm sets: ECONNREFUSED when
 * rejected, ETIMEDOUT when unreachable, ECONNRESET (104) when the peer disconnected first.
 *
 * {@snippet :
 * // the client of the seed's ping-pong (rdma_getaddrinfo, rdma_create_ep, rdma_reg_msgs, rdma_connect)
 * QpInitAttr attr = new QpInitAttr().cap(new QpCap(1, 1, 1, 1, 0));
 * try (Endpoint ep = Endpoint.create(AddrInfo.active("192.0.2.7", 7471), null, attr);
 *      Arena arena = Arena.ofShared()) { // registered memory: not a confined arena
 *     MemorySegment buf = arena.allocate(64);
 *     MemoryRegion mr = ep.regMsgs(buf);
 *     ep.connect(null);
 *     ep.postRecv(1, buf, mr);
 *     ep.postSend(2, buf, mr, SendFlag.SIGNALED);
 *     WorkCompletion wc = new WorkCompletion();
 *     ep.getSendComp(wc);   // polls, arms the CQ, waits on its channel
 *     ep.getRecvComp(wc);
 * }
 * }
 *
 * <p>Thread safe: posting from several threads is safe; each completion queue should have one waiter
 * at a time ({@code getSendComp} callers are serialised, as are {@code getRecvComp} callers).
 * {@link #close()} is safe in every state and from any thread: it wakes a thread waiting for a
 * completion or an event (EBADF).
 */
public final class Endpoint implements AutoCloseable {
    /** How long a synchronous step waits by default. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    /** rdma_create_ep's bound on address and route resolution. */
    static final int RESOLVE_TIMEOUT_MS = 2000;
    /** Linux's ECONNRESET (not among {@link Errno}'s names). */
    public static final int ECONNRESET = 104;

    private final CmEventChannel channel;
    private final CmId id;
    private final boolean passive;
    volatile long timeoutNs = DEFAULT_TIMEOUT.toNanos();
    private final AtomicBoolean closed = new AtomicBoolean();

    // what a passive endpoint makes each request's QP with (rdma_create_ep's qp_init_attr, kept)
    QpInitAttr listenAttr;
    ProtectionDomain listenPd;

    /** The QP, its CQs and channels, the PD and the regions, with rdma_verbs.h's calls on them. */
    private final EndpointVerbs verbs;

    /** The synchronous waits on the endpoint's channel, and the events they completed with. */
    final EndpointEvents events;
    private volatile boolean connected;
    private volatile boolean disconnected;

    Endpoint(CmEventChannel channel, CmId id, boolean passive) {
        this.channel = channel;
        this.id = id;
        this.passive = passive;
        this.verbs = new EndpointVerbs(id, closed);
        this.events = new EndpointEvents(channel, id);
    }

    /**
     * rdma_create_ep: an endpoint for {@code res}. An active one is resolved (address and route, 2 s
     * each) and, with {@code attr}, gets its QP in INIT; a passive one is bound, and keeps {@code pd}
     * and {@code attr} for the QPs of the requests {@link #getRequest} returns. Without {@code pd} a
     * protection domain of the device is made (and closed with the endpoint); CQs not named in
     * {@code attr} are made with a completion channel each, sized by the QP's capabilities, as
     * rdma_create_ep makes them. {@code attr} is copied, its type set from the port space.
     *
     * @param res where (see {@link AddrInfo})
     * @param pd a protection domain of the endpoint's device, or null
     * @param attr the QP's attributes, or null for an endpoint without a QP
     * @return the endpoint
     * @throws VerbsException passive: EADDRINUSE (port taken), EADDRNOTAVAIL (no device has the address);
     *     active: ENODEV, ENETUNREACH or EHOSTUNREACH (ADDR_ERROR: no device for the route's source, no
     *     route), ETIMEDOUT (no resolution within the timeout); the message names the step and the peer
     * @throws InterruptedException if interrupted while resolving
     */
    public static Endpoint create(AddrInfo res, ProtectionDomain pd, QpInitAttr attr) throws InterruptedException {
        return create(res, pd, attr, DEFAULT_TIMEOUT);
    }

    /**
     * As {@link #create(AddrInfo, ProtectionDomain, QpInitAttr)}, with the bound of each synchronous step.
     *
     * @param res where
     * @param pd a protection domain, or null
     * @param attr the QP's attributes, or null
     * @param timeout the bound of each synchronous step ({@link #timeout(Duration)})
     * @return the endpoint
     * @throws VerbsException as {@link #create(AddrInfo, ProtectionDomain, QpInitAttr)}; EINVAL for a
     *     timeout that is not positive
     * @throws InterruptedException if interrupted while resolving
     */
    public static Endpoint create(AddrInfo res, ProtectionDomain pd, QpInitAttr attr, Duration timeout)
            throws InterruptedException {
        return EndpointCreate.create(res, pd, attr, timeout);
    }

    // ------------------------------------------------------------------ connection steps

    /**
     * rdma_listen on a passive endpoint.
     *
     * @param backlog requests that may wait for {@link #getRequest} (0 or less: 1024)
     * @throws VerbsException EINVAL on an active endpoint or one that listens already; ENODEV when no
     *     device can take connections; EBADF once closed
     */
    public void listen(int backlog) {
        requirePassive("listen");
        id.listen(backlog);
    }

    /**
     * rdma_get_request: waits until a connection request comes (or the endpoint is closed: EBADF) and
     * returns its endpoint, with its QP made from the attributes given to {@link #create} (in INIT:
     * post receives, then {@link #accept}). The request's private data and parameters are in its
     * {@link #lastEvent()}.
     *
     * @return the request's endpoint, to accept or reject
     * @throws VerbsException EBADF when the endpoint is closed (also while waiting); EINVAL on an active
     *     endpoint; the provider's errno when the request's QP cannot be made
     * @throws InterruptedException if interrupted while waiting
     */
    public Endpoint getRequest() throws InterruptedException {
        Endpoint e = getRequest(Long.MAX_VALUE, TimeUnit.NANOSECONDS);
        if (e == null) {
            throw err(Errno.ETIMEDOUT, "get request on", "no connection request");
        }
        return e;
    }

    /**
     * As {@link #getRequest()}, waiting at most {@code timeout}.
     *
     * @param timeout how long
     * @param unit its unit
     * @return the request's endpoint, or null when none came in time
     * @throws VerbsException as {@link #getRequest()}
     * @throws InterruptedException if interrupted while waiting
     */
    public Endpoint getRequest(long timeout, TimeUnit unit) throws InterruptedException {
        requirePassive("getRequest");
        CmEvent e = events.nextRequest(unit.toNanos(timeout));
        return e == null ? null : EndpointCreate.forRequest(e, timeoutNs, listenPd, listenAttr);
    }

    /**
     * rdma_connect on an active endpoint: sends the request and waits for ESTABLISHED; the QP is then
     * in RTS.
     *
     * @param param connection parameters, or null for the defaults
     * @throws VerbsException ECONNREFUSED (REJECTED; the reason, in words in the message, is in
     *     {@link #lastEvent()}), ETIMEDOUT (UNREACHABLE after the CM's retries, or no ESTABLISHED within
     *     {@link #timeout()}), ENODEV (DEVICE_REMOVAL), EINVAL (a passive endpoint, or too much private
     *     data), EBADF (closed); the message names the server's address and port and the timeout
     * @throws InterruptedException if interrupted while waiting
     */
    public void connect(ConnParam param) throws InterruptedException {
        if (passive) {
            throw err(Errno.EINVAL, "connect from", "a passive endpoint listens, it does not connect");
        }
        id.connect(param == null ? new ConnParam() : param);
        events.await(timeoutNs, CmEventType.ESTABLISHED, null);
        connected = true;
    }

    /**
     * rdma_accept on a request's endpoint: moves its QP to RTS, answers (REP), and waits for ESTABLISHED
     * (the client's RTU).
     *
     * @param param connection parameters, or null for the defaults
     * @throws VerbsException ETIMEDOUT (no RTU within {@link #timeout()}, or UNREACHABLE after the REP's
     *     retries), ECONNREFUSED (the client rejected, e.g. it gave up), EINVAL (not a request's endpoint,
     *     answered already, too much private data), EBADF (closed); the message names the client's
     *     address and port
     * @throws InterruptedException if interrupted while waiting
     */
    public void accept(ConnParam param) throws InterruptedException {
        id.accept(param == null ? new ConnParam() : param);
        events.await(timeoutNs, CmEventType.ESTABLISHED, null);
        connected = true;
    }

    /**
     * rdma_reject on a request's endpoint.
     *
     * @param privateData up to {@value ConnParam#MAX_REJ_PRIVATE_DATA} bytes, or null
     * @throws VerbsException EINVAL when not a request's endpoint, answered already, or too much private
     *     data; EBADF once closed
     */
    public void reject(byte[] privateData) {
        id.reject(privateData);
    }

    /**
     * rdma_disconnect: the QP goes to ERROR (outstanding work requests flush) and this waits for
     * DISCONNECTED (at once if the peer disconnected first: this then sends the DREP the peer waits for,
     * so both sides call it, as with the kernel's CM). Nothing when not connected or done before.
     *
     * @throws VerbsException ETIMEDOUT when no DISCONNECTED came within {@link #timeout()} (the message
     *     names the peer and the timeout); EBADF when closed while waiting
     * @throws InterruptedException if interrupted while waiting
     */
    public void disconnect() throws InterruptedException {
        if (!connected || disconnected) {
            return;
        }
        disconnected = true;
        id.disconnect();
        events.awaitDisconnected(timeoutNs);
    }

    // ------------------------------------------------------------------ memory

    /**
     * rdma_reg_msgs: registers {@code buf} for sends and receives (LOCAL_WRITE) in the endpoint's PD.
     * The region is the program's to close (rdma_dereg_mr); what is still open is closed with the endpoint.
     *
     * @param buf native memory
     * @return the region
     * @throws VerbsException EINVAL when the endpoint has no PD (no QP made yet) or for heap memory; the
     *     provider's errno when the registration fails (ENOMEM past its limits)
     */
    public MemoryRegion regMsgs(MemorySegment buf) {
        return regMr(buf, Access.LOCAL_WRITE);
    }

    /**
     * rdma_reg_read: the peer may RDMA READ {@code buf}.
     *
     * @param buf native memory
     * @return the region
     * @throws VerbsException EINVAL when the endpoint has no PD (no QP made yet) or for heap memory; the
     *     provider's errno when the registration fails (ENOMEM past its limits)
     */
    public MemoryRegion regRead(MemorySegment buf) {
        return regMr(buf, Access.LOCAL_WRITE | Access.REMOTE_READ);
    }

    /**
     * rdma_reg_write: the peer may RDMA WRITE {@code buf}.
     *
     * @param buf native memory
     * @return the region
     * @throws VerbsException EINVAL when the endpoint has no PD (no QP made yet) or for heap memory; the
     *     provider's errno when the registration fails (ENOMEM past its limits)
     */
    public MemoryRegion regWrite(MemorySegment buf) {
        return regMr(buf, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
    }

    /**
     * Registers {@code buf} with any {@link Access} bits in the endpoint's PD (e.g. both remote read and
     * write, which rdma_verbs.h has no helper for).
     *
     * @param buf native memory (an {@code Arena}'s segment); a heap segment is refused with EINVAL, as by
     *     {@link ProtectionDomain#regMr}
     * @param access the access bits
     * @return the region
     * @throws VerbsException EINVAL when the endpoint has no PD (no QP made yet) or for heap memory; the
     *     provider's errno when the registration fails (ENOMEM past its limits)
     */
    public MemoryRegion regMr(MemorySegment buf, int access) {
        return verbs.regMr(pd(), buf, access);
    }

    // ------------------------------------------------------------------ posting

    /**
     * rdma_post_recv: a receive into {@code buf}, which must lie in {@code mr}.
     *
     * @param wrId the work request id (the C API's context)
     * @param buf where the message goes
     * @param mr the region holding {@code buf}
     * @throws VerbsException EINVAL when the buffer is not inside {@code mr}; EBADF once closed; the
     *     QP's errno when the queue is full (ENOMEM) or the QP is in the wrong state
     */
    public void postRecv(long wrId, MemorySegment buf, MemoryRegion mr) {
        verbs.postRecv(wrId, buf, mr);
    }

    /**
     * rdma_post_send: a SEND of {@code buf}.
     *
     * @param wrId the work request id
     * @param buf the message
     * @param mr the region holding {@code buf}; null to send it inline (copied at post time)
     * @param flags {@link org.rdma4j.verbs.SendFlag} bits (SIGNALED for a completion)
     * @throws VerbsException EINVAL when the buffer is not inside {@code mr}; EBADF once closed; the
     *     QP's errno when the queue is full (ENOMEM) or the QP is in the wrong state
     */
    public void postSend(long wrId, MemorySegment buf, MemoryRegion mr, int flags) {
        verbs.postSend(wrId, buf, mr, flags);
    }

    /**
     * rdma_post_read: an RDMA READ of the peer's {@code remoteAddr} (key {@code rkey}) into {@code buf}.
     *
     * @param wrId the work request id
     * @param buf where the data goes
     * @param mr the region holding {@code buf}
     * @param flags {@link org.rdma4j.verbs.SendFlag} bits
     * @param remoteAddr the peer's address
     * @param rkey the peer's remote key
     * @throws VerbsException EINVAL when the buffer is not inside {@code mr}; EBADF once closed; the
     *     QP's errno when the queue is full (ENOMEM) or the QP is in the wrong state
     */
    public void postRead(long wrId, MemorySegment buf, MemoryRegion mr, int flags, long remoteAddr, int rkey) {
        verbs.postRead(wrId, buf, mr, flags, remoteAddr, rkey);
    }

    /**
     * rdma_post_write: an RDMA WRITE of {@code buf} to the peer's {@code remoteAddr} (key {@code rkey}).
     *
     * @param wrId the work request id
     * @param buf the data
     * @param mr the region holding {@code buf}; null to write it inline
     * @param flags {@link org.rdma4j.verbs.SendFlag} bits (without SIGNALED no completion unless it fails)
     * @param remoteAddr the peer's address
     * @param rkey the peer's remote key
     * @throws VerbsException EINVAL when the buffer is not inside {@code mr}; EBADF once closed; the
     *     QP's errno when the queue is full (ENOMEM) or the QP is in the wrong state
     */
    public void postWrite(long wrId, MemorySegment buf, MemoryRegion mr, int flags, long remoteAddr, int rkey) {
        verbs.postWrite(wrId, buf, mr, flags, remoteAddr, rkey);
    }

    // ------------------------------------------------------------------ completions

    /**
     * rdma_get_send_comp: the next completion of the send CQ into {@code wc}; polls, and when there is
     * none arms the CQ, polls again and waits on its completion channel. Bounded by {@link #timeout()}.
     * The completion's status is the QP's (e.g. WR_FLUSH_ERR after a disconnect): check it.
     *
     * @param wc where the completion is copied
     * @throws VerbsException ETIMEDOUT when none came within the timeout (the message names the peer and
     *     the timeout); EBADF when the endpoint closed; EINVAL when it has no QP
     * @throws InterruptedException if interrupted while waiting
     */
    public void getSendComp(WorkCompletion wc) throws InterruptedException {
        verbs.getComp(true, wc, timeoutNs);
    }

    /**
     * As {@link #getSendComp(WorkCompletion)}, waiting at most {@code timeout}.
     *
     * @param wc where the completion is copied
     * @param timeout how long
     * @param unit its unit
     * @return true with a completion in {@code wc}, false when none came in time
     * @throws VerbsException EBADF when the endpoint closed; EINVAL when it has no QP
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean getSendComp(WorkCompletion wc, long timeout, TimeUnit unit) throws InterruptedException {
        return verbs.getComp(true, wc, timeout, unit);
    }

    /**
     * rdma_get_recv_comp: as {@link #getSendComp(WorkCompletion)} on the receive CQ.
     *
     * @param wc where the completion is copied
     * @throws VerbsException ETIMEDOUT when none came within the timeout (the message names the peer and
     *     the timeout); EBADF when the endpoint closed; EINVAL when it has no QP
     * @throws InterruptedException if interrupted while waiting
     */
    public void getRecvComp(WorkCompletion wc) throws InterruptedException {
        verbs.getComp(false, wc, timeoutNs);
    }

    /**
     * As {@link #getRecvComp(WorkCompletion)}, waiting at most {@code timeout}.
     *
     * @param wc where the completion is copied
     * @param timeout how long
     * @param unit its unit
     * @return true with a completion in {@code wc}, false when none came in time
     * @throws VerbsException EBADF when the endpoint closed; EINVAL when it has no QP
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean getRecvComp(WorkCompletion wc, long timeout, TimeUnit unit) throws InterruptedException {
        return verbs.getComp(false, wc, timeout, unit);
    }

    // ------------------------------------------------------------------ accessors

    /** {@return the endpoint's connection manager id (rdma_create_ep's {@code *id})} (its options may be set before connect or listen) */
    public CmId id() {
        return id;
    }

    /** {@return the QP ({@code id->qp}), or null when the endpoint has none; it lives until {@link #close()}} */
    public QueuePair qp() {
        return verbs.qp;
    }

    /** {@return the protection domain ({@code id->pd}: the one given, or the endpoint's own), or null before a QP} */
    public ProtectionDomain pd() {
        ProtectionDomain p = verbs.pd;
        return p != null ? p : listenPd;
    }

    /** {@return the QP's send CQ ({@code id->send_cq}), or null} */
    public CompletionQueue sendCq() {
        return verbs.send.cq;
    }

    /** {@return the QP's receive CQ ({@code id->recv_cq}), or null} */
    public CompletionQueue recvCq() {
        return verbs.recv.cq;
    }

    /** {@return the device context ({@code id->verbs}), or null while unbound} (the connection manager's: do not close it) */
    public Context context() {
        return id.context();
    }

    /**
     * {@return the last event a synchronous step completed with} ({@code id->event}): for a request's
     * endpoint the CONNECT_REQUEST with the peer's private data and parameters; after connect the
     * ESTABLISHED with the peer's private data; after a failure the event that ended the step (e.g.
     * REJECTED with the reason as status). Null before any.
     */
    public CmEvent lastEvent() {
        return events.lastEvent;
    }

    /**
     * {@return for an endpoint from {@link #getRequest}: its CONNECT_REQUEST, with the client's private
     * data and connection parameters (also after {@link #accept}); else null}
     */
    public CmEvent connectRequest() {
        return events.request;
    }

    /** {@return whether connect or accept completed and disconnect was not called} */
    public boolean isConnected() {
        return connected && !disconnected && !closed.get();
    }

    /** {@return whether the endpoint is passive (binds and listens)} */
    public boolean isPassive() {
        return passive;
    }

    /** {@return the local address and port ({@code rdma_get_local_addr})} */
    public InetSocketAddress localAddress() {
        return id.localAddress();
    }

    /** {@return the peer's address and port ({@code rdma_get_peer_addr}), or null} */
    public InetSocketAddress remoteAddress() {
        return id.remoteAddress();
    }

    /** {@return the bound of each synchronous step} */
    public Duration timeout() {
        return Duration.ofNanos(timeoutNs);
    }

    /**
     * Sets the bound of each synchronous step and of {@link #getSendComp(WorkCompletion)}/{@link
     * #getRecvComp(WorkCompletion)}; requests from {@link #getRequest} inherit it.
     *
     * @param timeout a positive duration
     * @return this
     */
    public Endpoint timeout(Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new VerbsException(Errno.EINVAL, "set the endpoint's timeout: it must be positive, got " + CmWords.duration(timeout));
        }
        this.timeoutNs = timeout.toNanos();
        return this;
    }

    /** {@return whether {@link #close()} was called} */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * rdma_destroy_ep, safe in every state and idempotent: a connected endpoint is disconnected (DREQ, or
     * the DREP that answers the peer's; QP to ERROR) without waiting, a request not accepted is rejected, a passive endpoint stops
     * listening and rejects the requests no one took; then the QP, the CQs and channels it made, the
     * regions registered through it and its own PD are released, and the id. Threads waiting in the
     * endpoint wake with EBADF.
     *
     * @throws VerbsException only when the program still holds something on the endpoint's own PD it
     *     did not register through the endpoint (EBUSY); everything else is released first
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException first = null;
        if (connected && !disconnected) {
            EndpointVerbs.attempt(id::disconnect, null); // DREQ out, QP to ERROR: the peer learns now
        }
        EndpointVerbs.attempt(id::destroyQp, null); // fails only for a QP the program attached to multicast: the CQ says so

        first = verbs.release(first);
        EndpointVerbs.attempt(id::close, null);
        if (passive) {
            events.rejectUntaken();
        }
        channel.close(); // wakes a thread in getRequest, connect, accept or disconnect (EBADF)
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "Endpoint[" + (passive ? "passive " : "") + id.localAddress() + " -> " + id.remoteAddress()
                + (verbs.qp != null ? ", qp 0x" + Integer.toHexString(verbs.qp.qpn()) : "") + "]";
    }

    // ------------------------------------------------------------------ inside

    void closeQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            // the failure that made us close is the one to report
        }
    }

    /**
     * rdma_create_qp for an endpoint made without QP attributes (a request's endpoint of a listener
     * made without them, or an active one): the QP in INIT, with a PD of the device when {@code given}
     * is null and a CQ with a completion channel for each side {@code attr} names no CQ for.
     *
     * @param given a protection domain of the endpoint's device, or null
     * @param attr the QP's attributes (copied; the type follows the port space)
     * @return the QP
     * @throws VerbsException EINVAL when the endpoint has a QP already, is passive, or is not bound to a device
     */
    public QueuePair createQp(ProtectionDomain given, QpInitAttr attr) {
        return verbs.createQp(passive, given, Objects.requireNonNull(attr, "attr"));
    }

    /** The error of {@code step} on this endpoint: errno, the step, its peer (or local address), what. */
    private VerbsException err(int errno, String step, String what) {
        return CmWords.error(errno, step, id.remoteAddress(), id.localAddress(), what);
    }

    private void requirePassive(String what) {
        if (!passive) {
            throw err(Errno.EINVAL, what + " from", "needs a passive endpoint (AddrInfo.passive)");
        }
    }

}
