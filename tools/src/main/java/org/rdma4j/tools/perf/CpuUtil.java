// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * --cpu_util: the machine's CPU use over a -D run's sample window, as perftest measures it
 * ({@code get_cpu_stats} and {@code calc_cpu_util}): the first line of /proc/stat read when sampling
 * starts and when it stops, and {@code user / (user + idle) * 100} of the differences (perftest counts
 * user time only, not nice or system). A daemon thread watches the run's {@link DurationClock} every
 * millisecond, so the data path does nothing for it; {@link #takePercent()} gives the window's value.
 * Where /proc/stat cannot be read the value is 0, as perftest's.
 */
final class CpuUtil implements AutoCloseable {
    private static final Path PROC_STAT = Path.of("/proc/stat");

    private final PerfRun run;
    private final Thread thread;
    private volatile boolean done;
    private DurationClock seen; // guarded by this
    private long[] start; // guarded by this
    private long[] end; // guarded by this

    private CpuUtil(PerfRun run) {
        this.run = run;
        this.thread = Thread.ofPlatform().daemon().name("perf-cpu-util").unstarted(this::watch);
    }

    /** Starts watching {@code run}'s sample windows. */
    static CpuUtil start(PerfRun run) {
        CpuUtil c = new CpuUtil(run);
        c.thread.start();
        return c;
    }

    private void watch() {
        while (!done) {
            Loops l = run.loops;
            DurationClock c = l == null ? null : l.clock;
            if (c != null) {
                synchronized (this) {
                    if (c != seen) {
                        seen = c;
                        start = null;
                        end = null;
                    }
                    int s = c.state();
                    if (s >= DurationClock.SAMPLE && start == null) {
                        start = read();
                    }
                    if (s >= DurationClock.STOP_SAMPLE && start != null && end == null) {
                        end = read();
                    }
                }
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** The last window's CPU use in percent (its end read now if the watcher has not yet). */
    synchronized double takePercent() {
        if (start == null) {
            return 0;
        }
        long[] e = end != null ? end : read();
        return percent(start, e);
    }

    /** perftest's calc_cpu_util. */
    static double percent(long[] start, long[] end) {
        long user = end[0] - start[0];
        long idle = end[1] - start[1];
        return user + idle != 0 ? (float) user / (user + idle) * 100 : 0;
    }

    /** {user, idle} of /proc/stat's "cpu" line, or zeros. */
    static long[] parse(String firstLine) {
        String[] w = firstLine.trim().split("\\s+");
        try {
            return new long[] {Long.parseLong(w[1]), Long.parseLong(w[4])};
        } catch (RuntimeException e) {
            return new long[2];
        }
    }

    private static long[] read() {
        try (var lines = Files.lines(PROC_STAT)) {
            return parse(lines.findFirst().orElse(""));
        } catch (IOException | RuntimeException e) {
            return new long[2];
        }
    }

    @Override
    public void close() {
        done = true;
        thread.interrupt();
    }
}
