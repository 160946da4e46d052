package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.GuidedBringUpConformanceTest;
import org.rdma4j.verbs.Context;

class SoftGuidedBringUpConformanceTest extends GuidedBringUpConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
