package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.UdConformanceTest;
import org.rdma4j.verbs.Context;

class SoftUdConformanceTest extends UdConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
