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

    static Context open() {
        init();
        return a.open();
    }

    static Context openPeer() {
        init();
        return b.open();
    }
}
