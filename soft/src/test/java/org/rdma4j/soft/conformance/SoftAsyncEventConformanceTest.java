package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.AsyncEventConformanceTest;
import org.rdma4j.verbs.Context;

class SoftAsyncEventConformanceTest extends AsyncEventConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
