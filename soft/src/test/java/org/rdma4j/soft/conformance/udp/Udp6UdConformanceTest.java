package org.rdma4j.soft.conformance.udp;

import org.rdma4j.conformance.UdConformanceTest;
import org.rdma4j.verbs.Context;

/** Ud conformance on soft devices talking RoCEv2 over IPv6 UDP sockets (::1, two ports). */
class Udp6UdConformanceTest extends UdConformanceTest {
    @Override
    protected Context openContext() {
        return UdpFixture.openV6();
    }

    @Override
    protected Context openPeerContext() {
        return UdpFixture.openV6Peer();
    }

    @Override
    protected int gidIndex(Context c) {
        return UdpFixture.GID_INDEX;
    }
}
