// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Objects;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * Where an {@link Endpoint} is to be made ({@code struct rdma_addrinfo} from {@code rdma_getaddrinfo}):
 * a passive one binds {@link #source()} and listens; an active one resolves {@link #destination()},
 * from {@link #source()} when given. Immutable.
 *
 * {@snippet :
 * AddrInfo server = AddrInfo.passive(null, 7471);                  // RAI_PASSIVE, any address
 * AddrInfo client = AddrInfo.active("192.0.2.7", 7471);            // rdma_getaddrinfo("192.0.2.7", "7471")
 * }
 *
 * @param source the local address ({@code ai_src_addr}; passive: what to bind, a wildcard when null was
 *     given); may be null for an active endpoint (the connection manager picks)
 * @param destination the peer's address ({@code ai_dst_addr}; active), null for a passive endpoint
 * @param passive whether the endpoint listens ({@code ai_flags & RAI_PASSIVE})
 * @param portSpace the port space ({@code ai_port_space}; TCP: RC connections)
 */
public record AddrInfo(InetSocketAddress source, InetSocketAddress destination, boolean passive,
        PortSpace portSpace) {

    /**
     * Checks the combination: a passive one has a source and no destination, an active one a destination.
     *
     * @throws VerbsException EINVAL for another combination
     */
    public AddrInfo {
        Objects.requireNonNull(portSpace, "portSpace");
        if (passive ? source == null || destination != null : destination == null) {
            throw new VerbsException(Errno.EINVAL, passive ? "AddrInfo: a passive one has a source and no destination"
                    : "AddrInfo: an active one needs a destination");
        }
    }

    /**
     * rdma_getaddrinfo with RAI_PASSIVE: the address to listen on.
     *
     * @param node a host name or address, or null for every local address (0.0.0.0)
     * @param port the port (0: one is picked when binding)
     * @return the AddrInfo
     * @throws VerbsException ENOENT when the host name does not resolve
     */
    public static AddrInfo passive(String node, int port) {
        InetAddress a = node == null ? wildcard() : lookup(node, checkPort(port), "listen on");
        return new AddrInfo(new InetSocketAddress(a, port), null, true, PortSpace.TCP);
    }

    /**
     * rdma_getaddrinfo without RAI_PASSIVE: the peer to connect to; the source is chosen when the
     * endpoint is made ({@link #withSource}).
     *
     * @param node the peer's host name or address
     * @param port the peer's port
     * @return the AddrInfo
     * @throws VerbsException ENOENT when the host name does not resolve
     */
    public static AddrInfo active(String node, int port) {
        Objects.requireNonNull(node, "node");
        return new AddrInfo(null, new InetSocketAddress(lookup(node, checkPort(port), "resolve address of"), port),
                false, PortSpace.TCP);
    }

    /**
     * {@return a copy with this local address (an active endpoint's source; a passive endpoint's bind address)}
     *
     * @param address the address; null: any (passive) or chosen (active)
     */
    public AddrInfo withSource(InetAddress address) {
        if (passive) {
            int port = source.getPort();
            return new AddrInfo(new InetSocketAddress(address == null ? wildcard() : address, port), null, true,
                    portSpace);
        }
        return new AddrInfo(address == null ? null : new InetSocketAddress(address, 0), destination, false, portSpace);
    }

    /**
     * {@return a copy in another port space}
     *
     * @param ps the port space
     */
    public AddrInfo withPortSpace(PortSpace ps) {
        return new AddrInfo(source, destination, passive, ps);
    }

    private static InetAddress wildcard() {
        try {
            return InetAddress.getByAddress(new byte[4]);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    private static InetAddress lookup(String node, int port, String step) {
        try {
            return InetAddress.getByName(node);
        } catch (UnknownHostException e) {
            throw new VerbsException(Errno.ENOENT, step + " " + node + ":" + port + ": the name " + node
                    + " does not resolve (rdma_getaddrinfo: EAI_NONAME)", e);
        }
    }

    private static int checkPort(int port) {
        if (port < 0 || port > 0xFFFF) {
            throw new VerbsException(Errno.EINVAL, "rdma_getaddrinfo: port " + port + " is outside 0..65535");
        }
        return port;
    }
}
