package org.rdma4j.soft.conformance.udp;

import org.rdma4j.conformance.LifetimeConformanceTest;
import org.rdma4j.soft.SoftInternals;
import org.rdma4j.verbs.Context;

/** Lifetime conformance on soft devices talking RoCEv2 over UDP sockets. */
class UdpLifetimeConformanceTest extends LifetimeConformanceTest {
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

    @Override
    protected long hiddenDeviceObjects(Context c) {
        return SoftInternals.keysAndQps(c);
    }
}
