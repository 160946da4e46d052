package org.rdma4j.soft.conformance.udp;

import org.rdma4j.conformance.EventPollerConformanceTest;
import org.rdma4j.verbs.Context;

/** EventPoller conformance on soft devices talking RoCEv2 over UDP sockets. */
class UdpEventPollerConformanceTest extends EventPollerConformanceTest {
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
