package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.SharedReceiveQueueConformanceTest;
import org.rdma4j.verbs.Context;

class SoftSharedReceiveQueueConformanceTest extends SharedReceiveQueueConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
