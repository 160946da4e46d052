// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import org.rdma4j.verbs.Errno;

/**
 * Which device and GID an id resolved with no source address uses, as rdma_resolve_addr decides it
 * (drivers/infiniband/core/addr.c, cma.c): the host's route to the destination chooses the source
 * address, and the device is the one that has that address as a GID. Here the route is asked of the
 * kernel through a UDP socket connected to the destination (its local address is the route's source).
 *
 * <ul>
 *   <li>A destination that is an address of this host (the kernel's local route) is reached on the
 *       device that has it, as the kernel loops back on the RDMA device of that address; a destination
 *       that is a GID of a soft device is reached on it too whatever the host's routes say (the
 *       in-process fabric, and the link-local GIDs, are networks of their own).</li>
 *   <li>No route: ADDR_ERROR with the kernel's errno (ENETUNREACH, EHOSTUNREACH, ...).</li>
 *   <li>A source address no device has: ADDR_ERROR, ENODEV, with words naming that address.</li>
 *   <li>A wildcard destination (rdma_cm's loopback resolve): a device of the family, as before.</li>
 * </ul>
 *
 * @param match the device, port and GID; null on an error
 * @param errno 0, or the errno of the ADDR_ERROR
 * @param detail null, or what was tried, in words, for the ADDR_ERROR event
 */
record SourceRoute(DeviceMatch match, int errno, String detail) {
    /** The destination port the route is asked for (the kernel's route does not depend on it). */
    private static final int ROCE_V2_PORT = 4791;

    /** How the source address of the route to a destination is found: the kernel's, unless a test stands in. */
    interface Router {
        /** {@return the source address the host's route to {@code dst} uses} */
        InetAddress source(InetAddress dst) throws IOException;
    }

    /** The kernel's route; a test may set another (and must put this one back). */
    static volatile Router router = SourceRoute::kernelSource;

    /**
     * Chooses the device for a connection to {@code dst} from an id's bound address: exactly that address
     * when it is a specific one, else as {@link #choose(CmEngine, InetAddress)}.
     *
     * @param engine the engine whose device list and contexts are used
     * @param bound the id's bound address, or null
     * @param dst the destination address
     * @return the choice, or the error to report
     */
    static SourceRoute choose(CmEngine engine, InetSocketAddress bound, InetAddress dst) {
        if (bound == null || DeviceMatch.isWildcard(bound.getAddress())) {
            return choose(engine, dst);
        }
        DeviceMatch m = DeviceMatch.find(engine, bound.getAddress(), dst);
        return new SourceRoute(m, m == null ? Errno.ENODEV : 0, m == null ? "no RDMA device has the bound address "
                + bound.getAddress().getHostAddress() : null);
    }

    /**
     * Chooses the device for a connection to {@code dst} from no particular source.
     *
     * @param engine the engine whose device list and contexts are used
     * @param dst the destination address
     * @return the choice, or the error to report
     */
    static SourceRoute choose(CmEngine engine, InetAddress dst) {
        if (DeviceMatch.isWildcard(dst)) {
            DeviceMatch m = DeviceMatch.find(engine, null, dst);
            return m != null ? new SourceRoute(m, 0, null) : new SourceRoute(null, Errno.ENODEV,
                    "no RDMA device has an address of the family of " + dst.getHostAddress());
        }
        InetAddress src = null;
        IOException noRoute = null;
        try {
            src = router.source(dst);
        } catch (IOException e) {
            noRoute = e;
        }
        boolean local = noRoute != null ? false : dst.isLoopbackAddress() || dst.equals(src);
        DeviceMatch owner = DeviceMatch.find(engine, dst, null);
        if (owner != null && (local || "soft".equals(owner.device().provider()))) {
            return new SourceRoute(owner, 0, null);
        }
        if (noRoute != null) {
            int errno = errno(noRoute);
            return new SourceRoute(null, errno, "no route to " + dst.getHostAddress() + " (" + Errno.name(errno)
                    + ": " + noRoute.getMessage() + ")");
        }
        if (src == null || src.isAnyLocalAddress()) {
            return new SourceRoute(null, Errno.ENETUNREACH, "the host gave no source address for a route to "
                    + dst.getHostAddress());
        }
        DeviceMatch m = DeviceMatch.find(engine, src, null);
        if (m != null) {
            return new SourceRoute(m, 0, null);
        }
        String s = src.getHostAddress();
        return new SourceRoute(null, Errno.ENODEV, "the route to " + dst.getHostAddress() + " leaves from " + s
                + ", and no RDMA device has " + s + " as a GID: give the source address of a device "
                + "(EndpointOptions.source, rdma4j tools: -I/-b ADDRESS) or make a soft device on " + s
                + " (EndpointOptions.softDevice(SoftDevicePolicy.ANY_ADDRESS), tools: --bind " + s + ")");
    }

    /** The local address of a UDP socket connected to {@code dst}: the source of the kernel's route. */
    private static InetAddress kernelSource(InetAddress dst) throws IOException {
        try (DatagramSocket s = new DatagramSocket(null)) {
            s.connect(new InetSocketAddress(dst, ROCE_V2_PORT));
            return s.getLocalAddress();
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** The errno connect(2) gave, from the exception the JDK made of it (its message is strerror's text). */
    static int errno(IOException e) {
        String m = String.valueOf(e.getMessage());
        if (e instanceof NoRouteToHostException || m.contains("No route to host")) {
            return Errno.EHOSTUNREACH;
        }
        if (m.contains("Invalid argument")) {
            return Errno.EINVAL;
        }
        if (m.contains("Permission denied")) {
            return Errno.EACCES;
        }
        if (m.contains("Address family not supported") || m.contains("Protocol family unavailable")
                || m.contains("Unsupported address type")) {
            return Errno.EAFNOSUPPORT;
        }
        return Errno.ENETUNREACH;
    }

    /** Posts this choice's ADDR_ERROR on {@code id}'s channel (nothing once the program closed the id). */
    void postError(CmId id) {
        if (!id.userClosed) {
            id.channel.post(new CmEvent(id.channel, CmEventType.ADDR_ERROR, -errno, id, null, null, null, null, 0,
                    null, detail));
        }
    }
}
