// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.agent;

import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/** How an {@link AgentRunner}'s thread waits after a round of {@link Agent#doWork()}. */
@FunctionalInterface
public interface IdleStrategy {
    /** Called after every round with its work count; waits (or not) before the next round. */
    void idle(int workCount);

    /** For an agent whose doWork blocks by itself (a socket receive with a timeout): never waits. */
    IdleStrategy NO_OP = workCount -> { };

    /**
     * Parks while a round found nothing to do, for as long as {@code nanosToWait} says (Long.MAX_VALUE:
     * until {@link AgentRunner#wake()}); a wake-up that comes before the park is not lost
     * ({@link LockSupport} keeps the permit).
     */
    static IdleStrategy parkUntil(LongSupplier nanosToWait) {
        return workCount -> {
            if (workCount > 0) {
                return;
            }
            long wait = nanosToWait.getAsLong();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
        };
    }
}
