package org.rdma4j.soft.conformance;

import org.rdma4j.conformance.ResourceLimitsConformanceTest;
import org.rdma4j.verbs.Context;

/** soft0 with rxe's limits: max_pd, max_cq and max_ah are reachable; the others are skipped. */
class SoftResourceLimitsConformanceTest extends ResourceLimitsConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.open();
    }
}
