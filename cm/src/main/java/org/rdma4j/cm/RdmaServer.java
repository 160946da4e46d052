// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rdma4j.verbs.VerbsException;

/**
 * The Java-shaped server: listens on an address and port, and {@link #accept()} returns connected
 * {@link Endpoint}s, each with its QP in RTS, its CQs and its completion channels, as a
 * {@code ServerSocket} returns sockets.
 *
 * {@snippet :
 * try (RdmaServer server = RdmaServer.listen(new InetSocketAddress("192.0.2.7", 7471), new EndpointOptions())) {
 *     try (Endpoint conn = server.accept(ep -> ep.postRecv(1, buf, ep.regMsgs(buf)))) {   // receive posted before accepting
 *         WorkCompletion wc = new WorkCompletion();
 *         conn.getRecvComp(wc);
 *     }
 * }
 * }
 *
 * <p>Thread safe: several threads may accept at once. {@link #close()} stops listening, rejects
 * requests not yet accepted and wakes every thread blocked in accept with a {@link VerbsException}
 * (EBADF); connections already accepted stay up.
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
     * @throws VerbsException EADDRINUSE when another server holds the port; EADDRNOTAVAIL when no device
     *     has the address
     */
    public static RdmaServer listen(InetSocketAddress address, EndpointOptions options) {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(options, "options");
        AddrInfo ai = new AddrInfo(address, null, true, PortSpace.TCP);
        Endpoint l;
        try {
            l = Endpoint.create(ai, null, options.qpInitAttr(), options.timeout());
        } catch (InterruptedException e) {
            throw new AssertionError("a passive endpoint does not wait", e);
        }
        try {
            options.applyTo(l.id());
            l.listen(options.backlog());
        } catch (RuntimeException e) {
            l.close();
            throw e;
        }
        return new RdmaServer(l, options);
    }

    /**
     * Listens on every address of every device.
     *
     * @param port the port
     * @return the server
     */
    public static RdmaServer listen(int port) {
        return listen(AddrInfo.passive(null, port).source(), new EndpointOptions());
    }

    /**
     * Waits for a client and returns its connected endpoint.
     *
     * @return the connection
     * @throws VerbsException EBADF when the server is closed (also while waiting); the step's errno
     *     when the client went away before the connection was up
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
     * @return the connection
     * @throws InterruptedException if interrupted while waiting
     */
    public Endpoint accept(Consumer<Endpoint> beforeAccept) throws InterruptedException {
        return connect(listener.getRequest(), beforeAccept);
    }

    /**
     * As {@link #accept(Consumer)}, waiting at most {@code timeout} for a client.
     *
     * @param timeout how long to wait for a request
     * @param unit its unit
     * @param beforeAccept what to do before accepting, or null
     * @return the connection, or null when no client came in time
     * @throws InterruptedException if interrupted while waiting
     */
    public Endpoint accept(long timeout, TimeUnit unit, Consumer<Endpoint> beforeAccept) throws InterruptedException {
        Endpoint req = listener.getRequest(timeout, unit);
        return req == null ? null : connect(req, beforeAccept);
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

    /** Stops listening; blocked accepts end with EBADF. Idempotent. */
    @Override
    public void close() {
        listener.close();
    }

    @Override
    public String toString() {
        return "RdmaServer[" + listener.localAddress() + "]";
    }
}
