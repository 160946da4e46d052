// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import org.rdma4j.soft.agent.Agent;
import org.rdma4j.soft.agent.NanoClock;

/** A clock a test moves by hand, driving an agent (the device's progress agent) at every step. Not thread safe. */
final class FakeClock implements NanoClock {
    private volatile long nowNs = 1_000_000_000L;
    private Agent agent;

    @Override
    public long nanoTime() {
        return nowNs;
    }

    /** The agent each {@link #advance} step runs. */
    FakeClock drive(Agent a) {
        agent = a;
        return this;
    }

    /** Moves the time on by {@code totalNs} in steps of {@code stepNs}, running the agent after each step. */
    void advance(long totalNs, long stepNs) {
        for (long done = 0; done < totalNs; done += stepNs) {
            nowNs += Math.min(stepNs, totalNs - done);
            if (agent != null) {
                agent.doWork();
            }
        }
    }

    /** {@link #advance} in steps of 1 ms. */
    void advanceMillis(long ms) {
        advance(ms * 1_000_000L, 1_000_000L);
    }
}
