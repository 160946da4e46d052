// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How long a thread was runnable but not running (it waited on a CPU's run queue), from Linux's
 * {@code /proc/self/task/TID/schedstat} (second field, ns). On a loaded host this is where a thread
 * that never blocks loses the time its CPU share does not show. -1 where Linux does not say
 * (another OS, or a kernel without schedstats). Stateless.
 */
final class RunQueue {
    private RunQueue() {}

    /** The calling thread's kernel thread id, or -1. */
    static int currentTid() {
        try {
            return Integer.parseInt(Path.of("/proc/thread-self").toRealPath().getFileName().toString());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Nanoseconds thread {@code tid} of this process has waited for a CPU so far, or -1. */
    static long waitNs(int tid) {
        if (tid < 0) {
            return -1;
        }
        try {
            String[] f = Files.readString(Path.of("/proc/self/task/" + tid + "/schedstat")).strip().split("\\s+");
            return Long.parseLong(f[1]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
