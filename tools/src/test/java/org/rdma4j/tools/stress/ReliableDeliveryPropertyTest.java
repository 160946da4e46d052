// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * RC under a hostile link: random mixes of SEND/WRITE/READ/atomics, 0..64 KiB over 1..4 SGEs on
 * several QPs, with 5% loss, 5% reordering, 1% duplication and 0.1% corruption. Every message must be
 * delivered exactly once, in order, with the right bytes and completions; atomics must end at the value
 * of a serial order.
 */
class ReliableDeliveryPropertyTest {
    @Property(tries = 6)
    void rcDeliversEveryMessageExactlyOnceInOrderUnderFaults(@ForAll long seed,
                                                             @ForAll @IntRange(min = 1, max = 4) int qps,
                                                             @ForAll("mtus") int mtu) {
        StressWorkload.Result r = StressWorkload.run(
                new StressWorkload.Config(0.05, 0.05, 0.01, 0.001, 400, seed, qps, 65536, mtu), null);
        assertTrue(r.ok(), r.summary() + " first error: " + r.firstError() + " (seed " + seed + ")");
        assertTrue(r.lost() > 0 && r.retransmits() > 0, "the link must actually have lost packets: " + r.summary());
    }

    @Property(tries = 2)
    void rcDeliversEverythingOnACleanLinkWithoutRetransmitting(@ForAll long seed) {
        StressWorkload.Result r = StressWorkload.run(
                new StressWorkload.Config(0, 0, 0, 0, 500, seed, 3, 65536, 1024), null);
        assertTrue(r.ok(), r.summary() + " first error: " + r.firstError());
        assertTrue(r.retransmits() == 0, "no retransmission without faults: " + r.summary());
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<Integer> mtus() {
        return net.jqwik.api.Arbitraries.of(256, 1024, 4096);
    }
}
