// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The chaos workload over real UDP sockets on loopback (127.0.0.1 and 127.0.0.2), faults in front. */
class UdpStressTest {
    @Test
    void rcOverUdpDeliversEverythingUnderFaults() {
        StressWorkload.Result r = StressWorkload.run(
                new StressWorkload.Config(0.02, 0.02, 0.01, 0.001, 600, 42, 2, 65536, 4096, true), null);
        assertTrue(r.ok(), r.summary() + " first error: " + r.firstError());
    }
}
