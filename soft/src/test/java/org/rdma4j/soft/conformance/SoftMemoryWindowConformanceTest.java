package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.MemoryWindowConformanceTest;
import org.rdma4j.verbs.Context;

class SoftMemoryWindowConformanceTest extends MemoryWindowConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
