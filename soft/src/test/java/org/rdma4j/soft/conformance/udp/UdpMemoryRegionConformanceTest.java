package org.rdma4j.soft.conformance.udp;

import org.rdma4j.conformance.MemoryRegionConformanceTest;
import org.rdma4j.verbs.Context;

/** MemoryRegion conformance on soft devices talking RoCEv2 over UDP sockets. */
class UdpMemoryRegionConformanceTest extends MemoryRegionConformanceTest {
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
