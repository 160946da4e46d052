package org.rdma4j.soft.conformance.udp;

import java.net.InetAddress;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.link.UdpLink;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;

/**
 * Two soft devices speaking RoCEv2 over real UDP sockets on the loopback interface: 127.0.0.1 and
 * 127.0.0.2, same port (a free one near 24791). GID index 1 is each device's address. The other
 * setups (DatagramChannel, IPv6, the port-state pair) are pairs made the same way by {@link #pair}.
 */
final class UdpFixture {
    static final int GID_INDEX = 1;
    private static Device[] native4;
    private static Device[] channel;
    private static Device[] native6;

    private UdpFixture() {}

    /**
     * Two devices {@code name-a} on {@code ipA} and {@code name-b} on {@code ipB} that talk to each
     * other: on two addresses with one free UDP port (from {@code fromPort}), or, on a single address
     * (IPv6 has only ::1), with two ports.
     */
    static Device[] pair(String name, String ipA, String ipB, int fromPort, UdpLink.Mode mode) {
        try {
            InetAddress ia = InetAddress.getByName(ipA);
            InetAddress ib = InetAddress.getByName(ipB);
            int pa;
            int pb;
            if (ia.equals(ib)) {
                pa = SoftDevices.freeUdpPort(fromPort, ia);
                pb = SoftDevices.freeUdpPort(pa + 1, ib);
            } else {
                pa = SoftDevices.freeUdpPort(fromPort, ia, ib);
                pb = pa;
            }
            return new Device[] {SoftDevices.createUdp(name + "-a", ia, pa, pb, mode),
                    SoftDevices.createUdp(name + "-b", ib, pb, pa, mode)};
        } catch (Exception e) {
            throw new IllegalStateException("cannot set up the UDP devices " + name + " on " + ipA + " and " + ipB
                    + " (is the loopback interface up, IPv6 too?)", e);
        }
    }

    private static synchronized Device[] native4() {
        if (native4 == null) {
            native4 = pair("soft-udp", "127.0.0.1", "127.0.0.2", 24791, UdpLink.Mode.AUTO);
        }
        return native4;
    }

    /** The same over java.nio DatagramChannels (the portable fallback), 127.0.0.3 and 127.0.0.4. */
    private static synchronized Device[] channel() {
        if (channel == null) {
            channel = pair("soft-chan", "127.0.0.3", "127.0.0.4", 25791, UdpLink.Mode.CHANNEL);
        }
        return channel;
    }

    /**
     * Two devices over IPv6 on ::1, told apart by their UDP ports (the only IPv6 loopback address):
     * covers the IPv6 ICRC, the IPv6 GRH area of UD receives and the address check with IPv6 GIDs.
     */
    private static synchronized Device[] native6() {
        if (native6 == null) {
            native6 = pair("soft-udp6", "::1", "::1", 26791, UdpLink.Mode.AUTO);
        }
        return native6;
    }

    static Context openV6() {
        return native6()[0].open();
    }

    static Context openV6Peer() {
        return native6()[1].open();
    }

    static Context openChannel() {
        return channel()[0].open();
    }

    static Context openChannelPeer() {
        return channel()[1].open();
    }

    static Context open() {
        return native4()[0].open();
    }

    static Context openPeer() {
        return native4()[1].open();
    }
}
