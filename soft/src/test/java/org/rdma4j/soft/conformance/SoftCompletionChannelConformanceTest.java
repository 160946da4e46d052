package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.CompletionChannelConformanceTest;
import org.rdma4j.verbs.Context;

class SoftCompletionChannelConformanceTest extends CompletionChannelConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
