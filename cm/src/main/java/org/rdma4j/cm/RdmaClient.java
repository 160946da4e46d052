// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.function.Consumer;
import org.rdma4j.verbs.VerbsException;

/**
 * The Java-shaped client: connects to host:port and returns a connected {@link Endpoint} (its
 * {@link Endpoint#qp() QP} in RTS, CQs with completion channels), as {@code new Socket(host, port)}
 * does. Underneath: {@code rdma_getaddrinfo}, {@code rdma_create_ep} (address and route resolution),
 * {@code rdma_connect}.
 *
 * {@snippet :
 * try (Endpoint conn = RdmaClient.connect("127.0.0.1", 7471)) {
 *     QueuePair qp = conn.qp();   // ready to post
 * }
 * }
 *
 * <p>The device: the one that has the source address (given with {@link EndpointOptions#source}, else
 * the one the host's route to the server leaves from, as rdma_resolve_addr picks it); a server address
 * that a device of this process has is reached on that device (a server and a client in one JVM). For a
 * loopback source address no device has, a soft RoCEv2 device is made (see {@link SoftDevicePolicy}).
 * A device holds its address's RoCEv2 UDP port, so a client in another JVM than a server on 127.0.0.1
 * cannot have a device there: with no source given it moves to the next loopback address whose port is
 * free (127.0.0.2, 127.0.0.3, ...), as a socket's source port is picked; with a source given, that
 * source's port must be free (EADDRINUSE otherwise).
 *
 * <p>Errors name the step, the server's address and port and any timeout in human units:
 * {@code ETIMEDOUT: connect to 127.0.0.2:7471 (local 127.0.0.1:40112): no ESTABLISHED within 30 s}.
 * Thread safe (no state); the endpoint returned is the caller's to close.
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
     *     ETIMEDOUT (unreachable after the CM's retries, or no ESTABLISHED within the timeout, 30 s),
     *     ENETUNREACH/EHOSTUNREACH (the host has no route), ENODEV (no local device has the source address
     *     of the host's route to it), ENOENT (unknown host), EADDRINUSE (a soft device to be made on the
     *     source address cannot have its RoCEv2 port)
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
     * @throws org.rdma4j.verbs.VerbsException as {@link #connect(String, int)}; EADDRNOTAVAIL when the
     *     options' source address has no device and their {@link SoftDevicePolicy} makes none
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
     * @throws org.rdma4j.verbs.VerbsException as {@link #connect(InetSocketAddress, EndpointOptions)}; what
     *     {@code beforeConnect} throws (the endpoint is closed then)
     * @throws InterruptedException if interrupted while connecting
     */
    public static Endpoint connect(InetSocketAddress server, EndpointOptions options, Consumer<Endpoint> beforeConnect)
            throws InterruptedException {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(options, "options");
        InetAddress source = LocalDevices.ensureClient(server, options.source(), options.softDevice());
        AddrInfo ai = new AddrInfo(source == null ? null : new InetSocketAddress(source, 0), server, false, PortSpace.TCP);
        Endpoint ep;
        try {
            ep = Endpoint.create(ai, null, options.qpInitAttr(), options.timeout());
        } catch (VerbsException e) {
            throw CmWords.naming(e, "connect to", server);
        }
        boolean ok = false;
        try {
            options.applyTo(ep.id());
            if (beforeConnect != null) {
                beforeConnect.accept(ep);
            }
            ep.connect(options.connParam());
            ok = true;
            return ep;
        } catch (VerbsException e) {
            throw CmWords.naming(e, "connect to", server);
        } finally {
            if (!ok) {
                ep.close();
            }
        }
    }
}
