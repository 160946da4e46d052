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
