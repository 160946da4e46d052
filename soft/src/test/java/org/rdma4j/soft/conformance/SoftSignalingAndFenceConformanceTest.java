package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.SignalingAndFenceConformanceTest;
import org.rdma4j.verbs.Context;

class SoftSignalingAndFenceConformanceTest extends SignalingAndFenceConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
