package org.rdma4j.soft.chaos;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.rdma4j.soft.StressWorkload;

class StressSmokeTest {
    @Test
    void cleanLinkDeliversEverything() {
        StressWorkload.Result r = StressWorkload.run(new StressWorkload.Config(0, 0, 0, 0, 2000, 1, 3, 65536, 1024), null);
        System.out.println(r.summary() + " " + r.firstError() + " ms=" + r.elapsedNanos() / 1e6);
        assertTrue(r.ok(), r.summary() + " " + r.firstError());
    }

    @Test
    void lossyLinkDeliversEverything() {
        StressWorkload.Result r = StressWorkload.run(new StressWorkload.Config(0.05, 0.05, 0.01, 0.001, 2000, 7, 3, 65536, 1024), null);
        System.out.println(r.summary() + " " + r.firstError() + " ms=" + r.elapsedNanos() / 1e6 + " lost=" + r.lost() + " counters=" + r.counters());
        assertTrue(r.ok(), r.summary() + " " + r.firstError());
    }
}
