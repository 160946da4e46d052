// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;

/**
 * The CPU time used so far by a few named threads, by every device thread ({@code rdma4j-*}) and by
 * the whole process, taken at one instant; the difference of two snapshots is what each used in
 * between ({@link #usedSince}).
 *
 * <p>Per thread, the total comes from {@link ThreadMXBean#getThreadCpuTime} (on Linux
 * {@code clock_gettime} of the thread's CPU clock, nanosecond resolution) and the user share from
 * {@link ThreadMXBean#getThreadUserTime} (on Linux the {@code utime} field of
 * {@code /proc/self/task/TID/stat}, in clock ticks of 10 ms); kernel = total - user. The process total
 * is {@code com.sun.management.OperatingSystemMXBean#getProcessCpuTime}. Immutable once taken.
 */
record CpuSnapshot(long wallNs, Map<Long, long[]> threads, Map<Long, String> names, long processNs) {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** Whether this JVM can measure per-thread CPU time at all (HotSpot on Linux can). */
    static boolean supported() {
        return THREADS.isThreadCpuTimeSupported();
    }

    /** Takes a snapshot of {@code threads} (by id) and of every live thread whose name starts with rdma4j-. */
    static CpuSnapshot take(long... threadIds) {
        if (!THREADS.isThreadCpuTimeEnabled()) {
            THREADS.setThreadCpuTimeEnabled(true);
        }
        long wall = System.nanoTime();
        Map<Long, long[]> times = new HashMap<>();
        Map<Long, String> names = new HashMap<>();
        for (long id : threadIds) {
            times.put(id, times(id));
        }
        for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith("rdma4j-") && !times.containsKey(info.getThreadId())) {
                names.put(info.getThreadId(), info.getThreadName());
                times.put(info.getThreadId(), times(info.getThreadId()));
            }
        }
        long process = ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os ? os.getProcessCpuTime() : -1;
        return new CpuSnapshot(wall, times, names, process);
    }

    private static long[] times(long id) {
        long cpu = THREADS.getThreadCpuTime(id);
        long user = THREADS.getThreadUserTime(id);
        return new long[] {Math.max(0, cpu), Math.max(0, user)};
    }

    /** CPU used between {@code start} and this snapshot. */
    Usage usedSince(CpuSnapshot start, long... threadIds) {
        long wall = wallNs - start.wallNs;
        Share[] named = new Share[threadIds.length];
        long namedTotal = 0;
        for (int i = 0; i < threadIds.length; i++) {
            named[i] = share(start, threadIds[i], wall);
            namedTotal += named[i].totalNs;
        }
        long devUser = 0;
        long devTotal = 0;
        Map<String, Long> perDevice = new java.util.TreeMap<>();
        for (Map.Entry<Long, String> e : names.entrySet()) {
            Share s = share(start, e.getKey(), wall);
            devUser += s.userNs;
            devTotal += s.totalNs;
            perDevice.merge(e.getValue(), s.totalNs, Long::sum);
        }
        Share devices = new Share(devUser, devTotal, wall);
        long other = processNs < 0 || start.processNs < 0 ? -1
                : Math.max(0, (processNs - start.processNs) - namedTotal - devTotal);
        return new Usage(wall, named, devices, perDevice, other);
    }

    private Share share(CpuSnapshot start, long id, long wall) {
        long[] now = threads.get(id);
        long[] then = start.threads.getOrDefault(id, new long[2]);
        if (now == null) {
            return new Share(0, 0, wall);
        }
        long total = Math.max(0, now[0] - then[0]);
        long user = Math.clamp(now[1] - then[1], 0, total);
        return new Share(user, total, wall);
    }

    /** One thread's (or a group's) CPU time over a wall-clock interval. */
    record Share(long userNs, long totalNs, long wallNs) {
        double userPercent() {
            return percent(userNs);
        }

        double kernelPercent() {
            return percent(totalNs - userNs);
        }

        double totalPercent() {
            return percent(totalNs);
        }

        private double percent(long ns) {
            return wallNs <= 0 ? 0 : 100.0 * ns / wallNs;
        }
    }

    /**
     * What was used over {@code wallNs}: by the named threads, by the device threads together (and by
     * name), and by the rest of the process (JIT, GC, ...; -1 when unknown).
     */
    record Usage(long wallNs, Share[] named, Share devices, Map<String, Long> perDeviceThreadNs, long otherNs) {
        double otherPercent() {
            return otherNs < 0 || wallNs <= 0 ? Double.NaN : 100.0 * otherNs / wallNs;
        }
    }
}
