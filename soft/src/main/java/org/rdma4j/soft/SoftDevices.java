// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.link.shm.ShmLink;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.VerbsException;

/**
 * The soft devices of this JVM. {@code soft0} on the default in-process fabric always exists; more
 * can be created (e.g. a peer for tests, or one behind a fault-injecting link). Thread safe.
 * {@snippet :
 * Device peer = SoftDevices.createLoopback("soft1");
 * }
 */
public final class SoftDevices {
    /** The name of the embedded default device. */
    public static final String DEFAULT_NAME = "soft0";

    private static final Map<String, SoftDevice> DEVICES = new LinkedHashMap<>();
    /** Fabrics named in device specs ({@code fabric=F}), while a device is on them. */
    private static final Map<String, LoopbackFabric> FABRICS = new LinkedHashMap<>();
    /** The named fabric of each device created on one. */
    private static final Map<String, String> FABRIC_OF = new LinkedHashMap<>();
    private static int nextIndex;

    private SoftDevices() {}

    static synchronized List<Device> all() {
        defaultDevice();
        return new ArrayList<>(DEVICES.values());
    }

    static synchronized SoftDevice defaultDevice() {
        SoftDevice d = DEVICES.get(DEFAULT_NAME);
        if (d == null) {
            d = create(DEFAULT_NAME, LoopbackFabric.defaultFabric(), null);
        }
        return d;
    }

    /** A new device on the default in-process fabric. EEXIST if the name is taken. */
    public static Device createLoopback(String name) {
        return createLoopback(name, LoopbackFabric.defaultFabric(), null);
    }

    /** A new device on the default in-process fabric with its own object limits (e.g. small ones for a test). */
    public static synchronized Device createLoopback(String name, ResourceLimits limits) {
        defaultDevice();
        return create(name, LoopbackFabric.defaultFabric(), null, limits);
    }

    /**
     * A new device on {@code fabric}; {@code linkWrapper} (may be null) wraps the device's link, e.g. in
     * a {@link org.rdma4j.soft.link.FaultyLink}.
     */
    @SuppressWarnings("exports") // link types: for this module's tests; other callers use a device spec
    public static synchronized Device createLoopback(String name, LoopbackFabric fabric,
                                                     UnaryOperator<Link> linkWrapper) {
        if (!name.equals(DEFAULT_NAME)) {
            defaultDevice();
        }
        return create(name, fabric, linkWrapper);
    }

    /**
     * A new device from a {@link org.rdma4j.verbs.DeviceSpec}: on the named in-process fabric
     * {@code fabricName} (created with its first device, gone with its last), or on the default fabric
     * when null; named {@code name}, or the first free {@code softN} when null.
     */
    static synchronized Device createOnFabric(String name, String fabricName, UnaryOperator<Link> linkWrapper) {
        defaultDevice();
        String n = name != null ? name : freeName("soft");
        if (fabricName == null) {
            return create(n, LoopbackFabric.defaultFabric(), linkWrapper);
        }
        LoopbackFabric fabric = FABRICS.computeIfAbsent(fabricName, f -> new LoopbackFabric());
        try {
            Device d = create(n, fabric, linkWrapper);
            FABRIC_OF.put(n, fabricName);
            return d;
        } catch (RuntimeException e) {
            if (!FABRIC_OF.containsValue(fabricName)) {
                FABRICS.remove(fabricName);
            }
            throw e;
        }
    }

    /** The named fabric {@code name} while a device is on it, else null (tests). */
    static synchronized LoopbackFabric namedFabric(String name) {
        return FABRICS.get(name);
    }

    /** The first of {@code prefix}0, {@code prefix}1, ... that names no device. */
    static synchronized String freeName(String prefix) {
        for (int i = 0;; i++) {
            if (!DEVICES.containsKey(prefix + i)) {
                return prefix + i;
            }
        }
    }

    private static SoftDevice create(String name, LoopbackFabric fabric, UnaryOperator<Link> wrapper) {
        return create(name, fabric, wrapper, ResourceLimits.RXE);
    }

    /**
     * A device on {@code fabric} whose time is {@code clock} and whose progress agent the caller drives
     * (no progress thread): timer tests move the clock instead of sleeping.
     */
    static synchronized SoftDevice createOnClock(String name, LoopbackFabric fabric,
                                                 org.rdma4j.soft.agent.NanoClock clock) {
        defaultDevice();
        return create(name, fabric, null, ResourceLimits.RXE, clock);
    }

    private static SoftDevice create(String name, LoopbackFabric fabric, UnaryOperator<Link> wrapper,
                                     ResourceLimits limits) {
        return create(name, fabric, wrapper, limits, null);
    }

    private static SoftDevice create(String name, LoopbackFabric fabric, UnaryOperator<Link> wrapper,
                                     ResourceLimits limits, org.rdma4j.soft.agent.NanoClock clock) {
        checkName(name);
        int index = ++nextIndex;
        long guid = guid(name, index);
        byte[] ula = {(byte) 0xFD, 0x72, 0x64, 0x6D, 0x61, 0x34, 0x6A, 0, 0, 0, 0, 0, 0, 0,
            (byte) (index >>> 8), (byte) index};
        Gid[] gids = {linkLocal(guid), Gid.of(ula)};
        SoftDevice d = new SoftDevice(name, guid, gids, hca -> {
            Link link = fabric.attach(hca, gids);
            return wrapper == null ? link : wrapper.apply(link);
        }, limits, clock);
        DEVICES.put(name, d);
        return d;
    }

    /**
     * A new device speaking RoCEv2 over UDP from {@code bind} (IPv4 or IPv6), port 4791: GID index 1 is
     * the bound address (index 0 a link-local placeholder). EADDRINUSE if the port is taken, EIO if the
     * socket cannot be set up.
     */
    public static Device createUdp(String name, InetAddress bind) {
        return createUdp(name, bind, UdpLink.ROCE_PORT, UdpLink.ROCE_PORT, UdpLink.Mode.AUTO);
    }

    /**
     * A UDP device bound to {@code bind}:{@code port} that sends to {@code remotePort} (both 4791 for
     * RoCE; other ports only between rdma4j peers, e.g. two devices on one address in tests).
     */
    @SuppressWarnings("exports") // link types: for this module's tests; other callers use a device spec
    public static Device createUdp(String name, InetAddress bind, int port, int remotePort, UdpLink.Mode mode) {
        return createUdp(name, bind, port, remotePort, mode, null);
    }

    /** As above, with {@code linkWrapper} (may be null) around the UDP link, e.g. a FaultyLink. */
    @SuppressWarnings("exports") // link types: for this module's tests; other callers use a device spec
    public static Device createUdp(String name, InetAddress bind, int port, int remotePort,
                                   UdpLink.Mode mode, UnaryOperator<Link> linkWrapper) {
        return createUdp(name, bind, port, remotePort, mode, ShmLink.Policy.UDP, linkWrapper);
    }

    /**
     * As above, choosing how packets reach devices of other processes on this host: {@code policy} UDP
     * (datagrams only), AUTO (a shared-memory ring to local peers that have one, UDP to the rest) or SHM
     * (shared memory only for unicast to other devices; see {@link ShmLink}).
     */
    @SuppressWarnings("exports") // link types: for this module's tests; other callers use a device spec
    public static synchronized Device createUdp(String name, InetAddress bind, int port, int remotePort,
                                                UdpLink.Mode mode, ShmLink.Policy policy,
                                                UnaryOperator<Link> linkWrapper) {
        defaultDevice();
        checkName(name);
        if (port < 1 || port > 65535 || remotePort < 1 || remotePort > 65535) {
            throw new VerbsException(Errno.EINVAL, "UDP ports must be 1..65535");
        }
        int index = ++nextIndex;
        long guid = guid(name, index);
        Gid[] gids = {linkLocal(guid), Gid.of(bind)};
        SoftDevice d = new SoftDevice(name, guid, gids, hca -> {
            try {
                Link link = policy == ShmLink.Policy.UDP ? UdpLink.open(bind, port, remotePort, mode, hca)
                        : ShmLink.open(bind, port, remotePort, mode, policy, hca);
                return linkWrapper == null ? link : linkWrapper.apply(link);
            } catch (IOException e) {
                int errno = String.valueOf(e.getMessage()).contains("EADDRINUSE") ? Errno.EADDRINUSE : Errno.EIO;
                throw new VerbsException(errno, "cannot open RoCEv2 UDP on " + bind.getHostAddress() + " port "
                        + port + ": " + e.getMessage());
            }
        });
        DEVICES.put(name, d);
        return d;
    }

    /**
     * A UDP port, at or above {@code from}, that is free on every one of {@code addresses} right now
     * (for devices that must share a port, as RoCE peers share 4791). IllegalStateException if none of
     * the next 500 is.
     */
    public static int freeUdpPort(int from, InetAddress... addresses) {
        for (int port = from; port < from + 500 && port < 65536; port++) {
            java.util.List<java.net.DatagramSocket> held = new java.util.ArrayList<>();
            try {
                for (InetAddress a : addresses) {
                    held.add(new java.net.DatagramSocket(new java.net.InetSocketAddress(a, port)));
                }
                return port;
            } catch (java.net.SocketException e) {
                // taken on one of them: try the next port
            } finally {
                held.forEach(java.net.DatagramSocket::close);
            }
        }
        throw new IllegalStateException("no UDP port free on all of " + java.util.Arrays.toString(addresses));
    }

    private static void checkName(String name) {
        if (name == null || name.isEmpty() || DEVICES.containsKey(name)) {
            throw new VerbsException(Errno.EEXIST, "a soft device named '" + name + "' exists");
        }
    }

    private static long guid(String name, int index) {
        return 0x0200_00FF_FE00_0000L | ((long) (name.hashCode() & 0xFFFF) << 8) | (index & 0xFF);
    }

    private static Gid linkLocal(long guid) {
        byte[] ll = new byte[16];
        ll[0] = (byte) 0xFE;
        ll[1] = (byte) 0x80;
        for (int i = 0; i < 8; i++) {
            ll[8 + i] = (byte) (guid >>> (56 - 8 * i));
        }
        return Gid.of(ll);
    }

    /**
     * Takes port {@code port} of soft device {@code device} down or brings it back up, like losing and
     * regaining carrier under rxe: while down, {@code queryPort} shows {@code PORT_DOWN} and the device
     * drops every packet it would send or receive (posting still works; RC traffic retransmits and
     * ends in RETRY_EXC_ERR unless the port comes back within the retry budget). Every open context
     * of the device gets IBV_EVENT_PORT_ERR on the way down and IBV_EVENT_PORT_ACTIVE on the way up;
     * setting the state it already has does nothing. ENODEV for an unknown device, EINVAL for a port
     * other than 1.
     */
    public static void setPortState(String device, int port, boolean up) {
        SoftDevice d;
        synchronized (SoftDevices.class) {
            d = device.equals(DEFAULT_NAME) ? defaultDevice() : DEVICES.get(device);
        }
        if (d == null) {
            throw new VerbsException(Errno.ENODEV, "no soft device named '" + device + "'");
        }
        if (port != 1) {
            throw new VerbsException(Errno.EINVAL, device + " has one port (1), not " + port);
        }
        d.setPortUp(up);
    }

    /**
     * Removes a device created here (not soft0); EBUSY while a context on it is open (close them
     * first). A removed device opens no more contexts (ENODEV).
     */
    public static synchronized void remove(Device device) {
        if (device.name().equals(DEFAULT_NAME)) {
            throw new VerbsException(Errno.EINVAL, "soft0 cannot be removed");
        }
        SoftDevice d = DEVICES.get(device.name());
        if (d != null) {
            d.markRemoved();
            DEVICES.remove(device.name());
            d.close();
            String fabric = FABRIC_OF.remove(device.name());
            if (fabric != null && !FABRIC_OF.containsValue(fabric)) {
                FABRICS.remove(fabric);
            }
        }
    }
}
