package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.ProtectionDomainConformanceTest;
import org.rdma4j.verbs.Context;

class SoftProtectionDomainConformanceTest extends ProtectionDomainConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
