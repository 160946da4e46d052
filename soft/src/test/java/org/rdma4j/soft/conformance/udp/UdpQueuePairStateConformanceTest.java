package org.rdma4j.soft.conformance.udp;

import org.rdma4j.conformance.QueuePairStateConformanceTest;
import org.rdma4j.verbs.Context;

/** QueuePairState conformance on soft devices talking RoCEv2 over UDP sockets. */
class UdpQueuePairStateConformanceTest extends QueuePairStateConformanceTest {
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
