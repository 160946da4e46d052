package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.PortStateConformanceTest;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;

/** On a device of its own ({@code soft-port}), since its port goes down. */
class SoftPortStateConformanceTest extends PortStateConformanceTest {
    private static Device device;

    @Override
    protected Context openContext() {
        synchronized (SoftPortStateConformanceTest.class) {
            if (device == null) {
                device = SoftDevices.createLoopback("soft-port");
            }
        }
        return device.open();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openPeer();
    }

    @Override
    protected void setPortUp(Context c, boolean up) {
        SoftDevices.setPortState(c.device().name(), 1, up);
    }
}
