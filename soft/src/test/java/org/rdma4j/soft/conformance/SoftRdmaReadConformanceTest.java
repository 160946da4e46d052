package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.RdmaReadConformanceTest;
import org.rdma4j.verbs.Context;

class SoftRdmaReadConformanceTest extends RdmaReadConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
