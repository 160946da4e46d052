package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.UcConformanceTest;
import org.rdma4j.verbs.Context;

class SoftUcConformanceTest extends UcConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
