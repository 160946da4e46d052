// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

/**
 * The busy-wait step of every spin loop here: a spin-wait hint, and every {@value #YIELD_EVERY}th
 * time a {@link Thread#yield()}. On a quiet machine with a core per spinning thread the yield never
 * matters (a round trip is far shorter than {@value #YIELD_EVERY} hints); on a small machine with
 * other load it lets a descheduled peer run instead of leaving the waiter to burn its whole time
 * slice, which otherwise turns a microsecond round trip into a multi-millisecond stall.
 */
final class Backoff {
    static final int YIELD_EVERY = 1024;

    private Backoff() {}

    /** Call once per unsuccessful check; returns the new spin count. */
    static int idle(int spins) {
        if ((++spins & (YIELD_EVERY - 1)) == 0) {
            Thread.yield();
        } else {
            Thread.onSpinWait();
        }
        return spins;
    }
}
