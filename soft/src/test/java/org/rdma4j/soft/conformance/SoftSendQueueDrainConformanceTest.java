package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.SendQueueDrainConformanceTest;
import org.rdma4j.verbs.Context;

class SoftSendQueueDrainConformanceTest extends SendQueueDrainConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
