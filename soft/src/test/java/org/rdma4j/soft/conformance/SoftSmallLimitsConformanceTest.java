package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.ResourceLimitsConformanceTest;
import org.rdma4j.soft.ResourceLimits;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;

/** A soft device created with 16 of everything, so that every limit is reached. */
class SoftSmallLimitsConformanceTest extends ResourceLimitsConformanceTest {
    private static Device device;

    @Override
    protected Context openContext() {
        synchronized (SoftSmallLimitsConformanceTest.class) {
            if (device == null) {
                device = SoftDevices.createLoopback("soft-small-limits", ResourceLimits.uniform(16));
            }
        }
        return device.open();
    }
}
