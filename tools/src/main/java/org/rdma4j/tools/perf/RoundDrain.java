// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import org.rdma4j.tools.cli.Spin;
import org.rdma4j.verbs.WorkCompletion;

/**
 * Between two --run_infinitely rounds: takes the send completions the last round left in the CQ (a
 * -D round stops posting and polling at its end with up to tx depth messages in flight), so the next
 * round starts with the queue's count right and polls for what it posts. Leaves fewer than cq_mod
 * in flight: their completion comes with the next signaled message. Not measured; bounded by the
 * exchange timeout. Stateless.
 */
final class RoundDrain {
    private RoundDrain() {}

    static void sends(Loops l) throws PerfFailure {
        PerfParams p = l.p;
        Spin wait = l.spin.begin();
        for (int i = 0; i < p.numQps; i++) {
            while (l.scnt[i] - l.ccnt[i] >= p.cqMod) {
                int ne = l.poll(l.r.sendCq, Loops.CTX_POLL_BATCH);
                for (int k = 0; k < ne; k++) {
                    WorkCompletion c = l.wc[k];
                    l.checkSendWc(c, l.scnt[i], l.ccnt[i]);
                    l.ccnt[(int) c.wrId()] += p.cqMod;
                }
                if (ne > 0) {
                    wait.begin();
                } else if (wait.idle()) {
                    throw l.stalled("send completion (between --run_infinitely rounds)");
                }
            }
        }
    }
}
