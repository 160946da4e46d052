package org.rdma4j.soft.conformance.udp;

import org.rdma4j.conformance.GuidedBringUpConformanceTest;
import org.rdma4j.verbs.Context;

/** Guided bring-up conformance on soft devices talking RoCEv2 over UDP sockets. */
class UdpGuidedBringUpConformanceTest extends GuidedBringUpConformanceTest {
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
