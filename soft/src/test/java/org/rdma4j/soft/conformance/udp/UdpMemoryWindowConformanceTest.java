package org.rdma4j.soft.conformance.udp;

import org.rdma4j.conformance.MemoryWindowConformanceTest;
import org.rdma4j.verbs.Context;

/** MemoryWindow conformance on soft devices talking RoCEv2 over UDP sockets. */
class UdpMemoryWindowConformanceTest extends MemoryWindowConformanceTest {
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
