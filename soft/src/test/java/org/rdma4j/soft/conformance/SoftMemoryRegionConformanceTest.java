package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.MemoryRegionConformanceTest;
import org.rdma4j.verbs.Context;

class SoftMemoryRegionConformanceTest extends MemoryRegionConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
