package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.RdmaWriteConformanceTest;
import org.rdma4j.verbs.Context;

class SoftRdmaWriteConformanceTest extends RdmaWriteConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
