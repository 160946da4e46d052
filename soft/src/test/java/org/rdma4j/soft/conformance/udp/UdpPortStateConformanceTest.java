package org.rdma4j.soft.conformance.udp;

import java.net.InetAddress;
import org.rdma4j.conformance.PortStateConformanceTest;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.link.UdpLink;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;

/**
 * Port state on soft devices talking RoCEv2 over UDP sockets: a pair of its own (127.0.0.5 and
 * 127.0.0.6), since the port under test goes down.
 */
class UdpPortStateConformanceTest extends PortStateConformanceTest {
    private static Device a;
    private static Device b;

    private static synchronized void init() {
        if (a == null) {
            try {
                InetAddress ia = InetAddress.getByName("127.0.0.5");
                InetAddress ib = InetAddress.getByName("127.0.0.6");
                int port = SoftDevices.freeUdpPort(26791, ia, ib);
                a = SoftDevices.createUdp("soft-udp-port-a", ia, port, port, UdpLink.Mode.AUTO);
                b = SoftDevices.createUdp("soft-udp-port-b", ib, port, port, UdpLink.Mode.AUTO);
            } catch (Exception e) {
                throw new IllegalStateException("cannot set up the UDP devices", e);
            }
        }
    }

    @Override
    protected Context openContext() {
        init();
        return a.open();
    }

    @Override
    protected Context openPeerContext() {
        init();
        return b.open();
    }

    @Override
    protected int gidIndex(Context c) {
        return UdpFixture.GID_INDEX;
    }

    @Override
    protected void setPortUp(Context c, boolean up) {
        SoftDevices.setPortState(c.device().name(), 1, up);
    }
}
