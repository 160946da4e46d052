package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.SendRecvConformanceTest;
import org.rdma4j.verbs.Context;

class SoftSendRecvConformanceTest extends SendRecvConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
