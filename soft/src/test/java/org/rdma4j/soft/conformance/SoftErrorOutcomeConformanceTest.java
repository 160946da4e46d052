package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.ErrorOutcomeConformanceTest;
import org.rdma4j.verbs.Context;

class SoftErrorOutcomeConformanceTest extends ErrorOutcomeConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
