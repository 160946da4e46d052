// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/**
 * Makes sure an RDMA device has a local address before an endpoint binds or resolves from it, making a
 * soft UDP device ({@code soft:udp?addr=...}) when the {@link SoftDevicePolicy} allows; the one place
 * the connection manager's Java front makes a device.
 */
final class LocalDevices {
    /** The UDP port of the devices made here: RoCEv2's 4791; tests set another, free, port (0: RoCEv2's). */
    static volatile int udpPort;

    private LocalDevices() {
    }

    /**
     * Makes a device on {@code local} when none has it and {@code policy} allows; nothing for a wildcard.
     *
     * @param local the local address
     * @param policy when to make one
     * @param step the step, for an error's words ("listen on", "connect to")
     * @param where the address and port the step is about, for an error's words
     * @throws VerbsException EADDRINUSE when another process holds the address's RoCE port (it has a device
     *     there: use another address), EADDRNOTAVAIL when {@code rdma4j-soft} is not on the path
     */
    static void ensure(InetAddress local, SoftDevicePolicy policy, String step, InetSocketAddress where) {
        if (local == null || local.isAnyLocalAddress() || !policy.allows(local)) {
            return;
        }
        synchronized (LocalDevices.class) {
            if (DeviceMatch.find(CmEngine.INSTANCE, local, null) != null) {
                return;
            }
            String a = local.getHostAddress();
            int port = udpPort;
            String spec = "soft:udp?name=" + name(local) + "&addr=" + a
                    + (port == 0 ? "" : "&port=" + port + "&peer-port=" + port);
            try {
                Verbs.createDevice(spec);
            } catch (VerbsException e) {
                if (e.errno() == Errno.ENODEV) {
                    throw new VerbsException(Errno.EADDRNOTAVAIL, CmWords.where(step, where, null)
                            + ": no RDMA device has the address " + a + ", and no soft provider is on the class or"
                            + " module path to make one (add org.rdma4j:rdma4j-soft)", e);
                }
                if (e.errno() == Errno.EADDRINUSE) {
                    throw new VerbsException(Errno.EADDRINUSE, CmWords.where(step, where, null) + ": cannot make a "
                            + "soft device on " + a + ": its RoCEv2 UDP port " + (port == 0 ? 4791 : port) + " is taken"
                            + " (another process has a device there: " + (step.startsWith("listen")
                            ? "listen on another address, e.g. 127.0.0.2, or end that process)"
                            : "give this side an address of its own, e.g. EndpointOptions.source(127.0.0.2))"), e);
                }
                throw e;
            }
        }
    }

    /** How many loopback addresses after the route's a client without a source tries (127.0.0.2, ...). */
    static final int LOOPBACK_TRIES = 16;

    /**
     * Makes the client's device: on its source address, or, with none, on the address the host's route
     * to {@code server} leaves from, unless a device has the server's address (loopback on one device).
     * A route's IPv4 loopback source whose RoCEv2 port another process holds (a server in another JVM on
     * 127.0.0.1) moves to the next loopback address whose port is free (127.0.0.2, 127.0.0.3, ...), as a
     * socket's source port is picked.
     *
     * @return the source address the client must bind: {@code source}, or the loopback address chosen
     *     instead of the route's (null: the route's, as before)
     */
    static InetAddress ensureClient(InetSocketAddress server, InetAddress source, SoftDevicePolicy policy) {
        if (policy == SoftDevicePolicy.NEVER || server.isUnresolved() || source != null) {
            if (source != null) {
                ensure(source, policy, "connect to", server);
            }
            return source;
        }
        InetAddress dst = server.getAddress();
        if (dst.isAnyLocalAddress() || DeviceMatch.find(CmEngine.INSTANCE, dst, null) != null) {
            return null; // a device has the server's address: the CM reaches it on that device
        }
        InetAddress src;
        try {
            src = SourceRoute.router.source(dst);
        } catch (IOException e) {
            return null; // no route: address resolution says so
        }
        try {
            ensure(src, policy, "connect to", server);
            return null;
        } catch (VerbsException e) {
            if (e.errno() != Errno.EADDRINUSE || !(src instanceof java.net.Inet4Address) || !src.isLoopbackAddress()) {
                throw e;
            }
            for (int i = 1; i <= LOOPBACK_TRIES; i++) {
                byte[] b = src.getAddress();
                b[3] = (byte) ((b[3] & 0xFF) + i);
                try {
                    InetAddress next = InetAddress.getByAddress(b);
                    if ((b[3] & 0xFF) == 0 || (b[3] & 0xFF) == 255) {
                        continue;
                    }
                    ensure(next, policy, "connect to", server);
                    return next;
                } catch (VerbsException | java.net.UnknownHostException again) {
                    // taken too: the next
                }
            }
            throw e;
        }
    }

    /** A device name from the address: "cm-127.0.0.1", "cm-fe80--1". */
    private static String name(InetAddress a) {
        return "cm-" + a.getHostAddress().replace(':', '-').replace('%', '-');
    }
}
