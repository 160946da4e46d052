package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.CompletionQueueConformanceTest;
import org.rdma4j.verbs.Context;

class SoftCompletionQueueConformanceTest extends CompletionQueueConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
