package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.EventPollerConformanceTest;
import org.rdma4j.verbs.Context;

class SoftEventPollerConformanceTest extends EventPollerConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
