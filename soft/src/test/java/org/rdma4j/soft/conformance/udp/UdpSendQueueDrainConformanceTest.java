package org.rdma4j.soft.conformance.udp;

import org.rdma4j.conformance.SendQueueDrainConformanceTest;
import org.rdma4j.verbs.Context;

/** SendQueueDrain conformance on soft devices talking RoCEv2 over UDP sockets. */
class UdpSendQueueDrainConformanceTest extends SendQueueDrainConformanceTest {
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
