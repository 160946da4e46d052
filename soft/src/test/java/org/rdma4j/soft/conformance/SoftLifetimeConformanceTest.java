package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.LifetimeConformanceTest;
import org.rdma4j.soft.SoftInternals;
import org.rdma4j.verbs.Context;

class SoftLifetimeConformanceTest extends LifetimeConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }

    @Override
    protected long hiddenDeviceObjects(Context c) {
        return SoftInternals.keysAndQps(c);
    }
}
