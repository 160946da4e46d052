package org.rdma4j.soft.conformance.udp;

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
    private static Device[] pair;

    private static synchronized Device[] devices() {
        if (pair == null) {
            pair = UdpFixture.pair("soft-udp-port", "127.0.0.5", "127.0.0.6", 26791, UdpLink.Mode.AUTO);
        }
        return pair;
    }

    @Override
    protected Context openContext() {
        return devices()[0].open();
    }

    @Override
    protected Context openPeerContext() {
        return devices()[1].open();
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
