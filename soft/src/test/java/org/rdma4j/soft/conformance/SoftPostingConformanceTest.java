package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.PostingConformanceTest;
import org.rdma4j.verbs.Context;

class SoftPostingConformanceTest extends PostingConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
