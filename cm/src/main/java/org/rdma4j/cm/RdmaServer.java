// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * The Java-shaped server: listens on an address and port, and {@link #accept()} returns connected
 * {@link Endpoint}s, each with its QP in RTS, its CQs and its completion channels, as a
 * {@code ServerSocket} returns sockets. Underneath: {@code rdma_create_ep} with {@code RAI_PASSIVE},
 * {@code rdma_listen}, then {@code rdma_get_request} and {@code rdma_accept} per connection.
 *
 * {@snippet :
 * try (RdmaServer server = RdmaServer.listen(new InetSocketAddress("127.0.0.1", 7471), new EndpointOptions())) {
 *     try (Endpoint conn = server.accept(ep -> ep.postRecv(1, buf, ep.regMsgs(buf)))) {   // receive posted before accepting
 *         WorkCompletion wc = new WorkCompletion();
 *         conn.getRecvComp(wc);
 *     }
 * }
 * }
 *
 * <p>The device: the one that has the listen address as a GID (an rxe or NIC port, a soft device); for
 * a loopback address no device has, a soft RoCEv2 device is made on it (see {@link SoftDevicePolicy};
 * {@link EndpointOptions#softDevice} changes when). A wildcard address listens on every device there is.
 *
 * <p>Errors name the step, the address and port, and any timeout in human units:
 * {@code EADDRINUSE: bind to 127.0.0.1:7471: port 7471 of TCP is in use (bound to 127.0.0.1:7471)}.
 *
 * <p>Thread safe: several threads may accept at once. {@link #close()} stops listening, rejects
 * requests not yet accepted and wakes every thread blocked in accept with a {@link VerbsException}
 * (EBADF); connections already accepted stay up, each the program's to close.
 */
public final class RdmaServer implements AutoCloseable {
    private final Endpoint listener;
    private final EndpointOptions options;

    private RdmaServer(Endpoint listener, EndpointOptions options) {
        this.listener = listener;
        this.options = options;
    }

    /**
     * Binds {@code address} (a wildcard address: every device) and listens.
     *
     * @param address where; port 0 picks one ({@link #localAddress()})
     * @param options what the accepted endpoints are made with
     * @return the server
     * @throws VerbsException EADDRINUSE when another server holds the port (or another process the
     *     address's RoCEv2 UDP port, for a soft device to be made); EADDRNOTAVAIL when no device has the
     *     address and the options' {@link SoftDevicePolicy} makes none; ENODEV when no device can take
     *     connections (a wildcard address)
     */
    public static RdmaServer listen(InetSocketAddress address, EndpointOptions options) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(options, "options");
        LocalDevices.ensure(address.getAddress(), options.softDevice(), "listen on", address);
        AddrInfo ai = new AddrInfo(address, null, true, PortSpace.TCP);
        Endpoint l;
        try {
            l = Endpoint.create(ai, null, options.qpInitAttr(), options.timeout());
        } catch (InterruptedException e) {
            throw new AssertionError("a passive endpoint does not wait", e);
        } catch (VerbsException e) {
            throw CmWords.naming(e, "listen on", address);
        }
        try {
            options.applyTo(l.id());
            l.listen(options.backlog());
        } catch (RuntimeException e) {
            l.close();
            throw e instanceof VerbsException v ? CmWords.naming(v, "listen on", address) : e;
        }
        return new RdmaServer(l, options);
    }

    /**
     * Listens on every address of every device, with the default {@link EndpointOptions}.
     *
     * @param port the port
     * @return the server
     * @throws VerbsException EADDRINUSE when another server holds the port; ENODEV when no device can take
     *     connections
     */
    public static RdmaServer listen(int port) {
        return listen(AddrInfo.passive(null, port).source(), new EndpointOptions());
    }

    /**
     * Waits for a client and returns its connected endpoint.
     *
     * @return the connection, the caller's to close
     * @throws VerbsException EBADF when the server is closed (also while waiting); the step's errno
     *     when the client went away before the connection was up (ETIMEDOUT: no RTU within the options'
     *     timeout; ECONNREFUSED: the client gave up), naming the client's address and port
     * @throws InterruptedException if interrupted while waiting
     */
    public Endpoint accept() throws InterruptedException {
        return accept(null);
    }

    /**
     * As {@link #accept()}, calling {@code beforeAccept} with the request's endpoint (QP in INIT)
     * before accepting it: post the first receives there, so that the client's first send finds one.
     *
     * @param beforeAccept what to do first, or null
     * @return the connection, the caller's to close
     * @throws VerbsException as {@link #accept()}; what {@code beforeAccept} throws (the request is then
     *     rejected)
     * @throws InterruptedException if interrupted while waiting
     */
    public Endpoint accept(Consumer<Endpoint> beforeAccept) throws InterruptedException {
        return connect(request(Long.MAX_VALUE, TimeUnit.NANOSECONDS), beforeAccept);
    }

    /**
     * As {@link #accept(Consumer)}, waiting at most {@code timeout} for a client.
     *
     * @param timeout how long to wait for a request
     * @param unit its unit
     * @param beforeAccept what to do before accepting, or null
     * @return the connection, the caller's to close, or null when no client came in time
     * @throws VerbsException as {@link #accept(Consumer)}
     * @throws InterruptedException if interrupted while waiting
     */
    public Endpoint accept(long timeout, TimeUnit unit, Consumer<Endpoint> beforeAccept) throws InterruptedException {
        Endpoint req = request(timeout, unit);
        return req == null ? null : connect(req, beforeAccept);
    }

    /** The next request, with EBADF saying which server closed. */
    private Endpoint request(long timeout, TimeUnit unit) throws InterruptedException {
        try {
            return listener.getRequest(timeout, unit);
        } catch (VerbsException e) {
            if (e.errno() != Errno.EBADF) {
                throw e;
            }
            throw new VerbsException(Errno.EBADF, CmWords.where("accept on", null, listener.localAddress())
                    + ": the server is closed", e);
        }
    }

    private Endpoint connect(Endpoint req, Consumer<Endpoint> beforeAccept) throws InterruptedException {
        boolean ok = false;
        try {
            if (beforeAccept != null) {
                beforeAccept.accept(req);
            }
            req.accept(options.connParam());
            ok = true;
            return req;
        } finally {
            if (!ok) {
                req.close();
            }
        }
    }

    /** {@return the address and port listened on} */
    public InetSocketAddress localAddress() {
        return listener.localAddress();
    }

    /** {@return the listening endpoint} (its id for options; it has no QP) */
    public Endpoint endpoint() {
        return listener;
    }

    /** {@return whether {@link #close()} was called} */
    public boolean isClosed() {
        return listener.isClosed();
    }

    /** Stops listening (rdma_destroy_ep of the listener); blocked accepts end with EBADF. Idempotent. */
    @Override
    public void close() {
        listener.close();
    }

    @Override
    public String toString() {
        return "RdmaServer[" + listener.localAddress() + "]";
    }
}
