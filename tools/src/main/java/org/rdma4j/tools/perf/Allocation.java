// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.lang.management.ManagementFactory;

/**
 * Bytes the current thread has allocated so far (HotSpot's per-thread counter), or -1 where the JVM
 * does not count; the loops' allocation check reads it before and after each measured loop.
 * Stateless.
 */
final class Allocation {
    private static final com.sun.management.ThreadMXBean MX = bean();

    private Allocation() {}

    private static com.sun.management.ThreadMXBean bean() {
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean b
                && b.isThreadAllocatedMemorySupported()) {
            if (!b.isThreadAllocatedMemoryEnabled()) {
                b.setThreadAllocatedMemoryEnabled(true);
            }
            return b;
        }
        return null;
    }

    static long ofThisThread() {
        return MX == null ? -1 : MX.getCurrentThreadAllocatedBytes();
    }
}
