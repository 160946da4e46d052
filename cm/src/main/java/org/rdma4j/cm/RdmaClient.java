// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The Java-shaped client: connects to host:port and returns a connected {@link Endpoint} (its
 * {@link Endpoint#qp() QP} in RTS, CQs with completion channels), as {@code new Socket(host, port)}
 * does.
 *
 * {@snippet :
 * try (Endpoint conn = RdmaClient.connect("192.0.2.7", 7471)) {
 *     QueuePair qp = conn.qp();   // ready to post
 * }
 * }
 */
public final class RdmaClient {
    private RdmaClient() {
    }

    /**
     * Connects with the default {@link EndpointOptions}.
     *
     * @param host the server's host name or address
     * @param port the server's port
     * @return the connection
     * @throws org.rdma4j.verbs.VerbsException ECONNREFUSED (rejected, e.g. no one listens: reason 8),
     *     ETIMEDOUT (unreachable), ENETUNREACH/EHOSTUNREACH (the host has no route), ENODEV (no local
     *     device has the source address of the host's route to it), ENOENT (unknown host)
     * @throws InterruptedException if interrupted while connecting
     */
    public static Endpoint connect(String host, int port) throws InterruptedException {
        return connect(AddrInfo.active(host, port).destination(), new EndpointOptions(), null);
    }

    /**
     * Connects to {@code server}.
     *
     * @param server the server's address and port
     * @param options what the endpoint is made with (its source address, QP capabilities, timeouts)
     * @return the connection
     * @throws InterruptedException if interrupted while connecting
     */
    public static Endpoint connect(InetSocketAddress server, EndpointOptions options) throws InterruptedException {
        return connect(server, options, null);
    }

    /**
     * Connects to {@code server}, calling {@code beforeConnect} with the endpoint (QP in INIT) before
     * the request goes out: post the first receives there.
     *
     * @param server the server's address and port
     * @param options what the endpoint is made with
     * @param beforeConnect what to do first, or null
     * @return the connection
     * @throws InterruptedException if interrupted while connecting
     */
    public static Endpoint connect(InetSocketAddress server, EndpointOptions options, Consumer<Endpoint> beforeConnect)
            throws InterruptedException {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(options, "options");
        AddrInfo ai = new AddrInfo(options.source() == null ? null : new InetSocketAddress(options.source(), 0), server,
                false, PortSpace.TCP);
        Endpoint ep = Endpoint.create(ai, null, options.qpInitAttr(), options.timeout());
        boolean ok = false;
        try {
            options.applyTo(ep.id());
            if (beforeConnect != null) {
                beforeConnect.accept(ep);
            }
            ep.connect(options.connParam());
            ok = true;
            return ep;
        } finally {
            if (!ok) {
                ep.close();
            }
        }
    }
}
