package org.rdma4j.soft.conformance.udp;

import java.net.InetAddress;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.link.UdpLink;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;

/**
 * Two soft devices speaking RoCEv2 over real UDP sockets on the loopback interface: 127.0.0.1 and
 * 127.0.0.2, same port (a free one near 24791). GID index 1 is each device's address.
 */
final class UdpFixture {
    static final int GID_INDEX = 1;
    private static Device a;
    private static Device b;
    private static Device channelA;
    private static Device channelB;
    private static Device v6a;
    private static Device v6b;

    private UdpFixture() {}

    private static synchronized void init() {
        if (a != null) {
            return;
        }
        try {
            InetAddress ia = InetAddress.getByName("127.0.0.1");
            InetAddress ib = InetAddress.getByName("127.0.0.2");
            int port = SoftDevices.freeUdpPort(24791, ia, ib);
            a = SoftDevices.createUdp("soft-udp-a", ia, port, port, UdpLink.Mode.AUTO);
            b = SoftDevices.createUdp("soft-udp-b", ib, port, port, UdpLink.Mode.AUTO);
        } catch (Exception e) {
            throw new IllegalStateException("cannot set up the UDP devices", e);
        }
    }

    /** The same over java.nio DatagramChannels (the portable fallback), 127.0.0.3 and 127.0.0.4. */
    private static synchronized void initChannel() {
        if (channelA != null) {
            return;
        }
        try {
            InetAddress ia = InetAddress.getByName("127.0.0.3");
            InetAddress ib = InetAddress.getByName("127.0.0.4");
            int port = SoftDevices.freeUdpPort(25791, ia, ib);
            channelA = SoftDevices.createUdp("soft-chan-a", ia, port, port, UdpLink.Mode.CHANNEL);
            channelB = SoftDevices.createUdp("soft-chan-b", ib, port, port, UdpLink.Mode.CHANNEL);
        } catch (Exception e) {
            throw new IllegalStateException("cannot set up the DatagramChannel devices", e);
        }
    }

    /**
     * Two devices over IPv6 on ::1, told apart by their UDP ports (the only IPv6 loopback address):
     * covers the IPv6 ICRC, the IPv6 GRH area of UD receives and the address check with IPv6 GIDs.
     */
    private static synchronized void initV6() {
        if (v6a != null) {
            return;
        }
        try {
            InetAddress lo6 = InetAddress.getByName("::1");
            int pa = SoftDevices.freeUdpPort(26791, lo6);
            int pb = SoftDevices.freeUdpPort(pa + 1, lo6);
            v6a = SoftDevices.createUdp("soft-udp6-a", lo6, pa, pb, UdpLink.Mode.AUTO);
            v6b = SoftDevices.createUdp("soft-udp6-b", lo6, pb, pa, UdpLink.Mode.AUTO);
        } catch (Exception e) {
            throw new IllegalStateException("cannot set up the IPv6 UDP devices on ::1 (is IPv6 loopback up?)", e);
        }
    }

    static Context openV6() {
        initV6();
        return v6a.open();
    }

    static Context openV6Peer() {
        initV6();
        return v6b.open();
    }

    static Context openChannel() {
        initChannel();
        return channelA.open();
    }

    static Context openChannelPeer() {
        initChannel();
        return channelB.open();
    }

    static Context open() {
        init();
        return a.open();
    }

    static Context openPeer() {
        init();
        return b.open();
    }
}
