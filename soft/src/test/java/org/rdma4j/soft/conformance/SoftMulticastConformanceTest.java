package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.MulticastConformanceTest;
import org.rdma4j.verbs.Context;

class SoftMulticastConformanceTest extends MulticastConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
