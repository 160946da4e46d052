package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.QueuePairStateConformanceTest;
import org.rdma4j.verbs.Context;

class SoftQueuePairStateConformanceTest extends QueuePairStateConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
