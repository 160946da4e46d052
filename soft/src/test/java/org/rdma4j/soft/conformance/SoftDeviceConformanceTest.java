package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.DeviceConformanceTest;
import org.rdma4j.verbs.Context;

class SoftDeviceConformanceTest extends DeviceConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }
}
