package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.AtomicConformanceTest;
import org.rdma4j.verbs.Context;

class SoftAtomicConformanceTest extends AtomicConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
