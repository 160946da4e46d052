package org.rdma4j.soft.conformance.udp;

import org.rdma4j.conformance.MulticastConformanceTest;
import org.rdma4j.verbs.Context;

/**
 * Multicast between soft devices over UDP on the loopback interface: each device joins the IPv4
 * group (239.77.x.y) on 127.0.0.1 with IP_ADD_MEMBERSHIP and sends with IP_MULTICAST_IF 127.0.0.1.
 */
class UdpMulticastConformanceTest extends MulticastConformanceTest {
    @Override
    protected Context openContext() {
        return UdpFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return UdpFixture.openPeer();
    }

    @Override
    protected int gidIndex(Context c) {
        return UdpFixture.GID_INDEX;
    }
}
