// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.PrintWriter;

/**
 * A progress bar on stderr for runs that take more than about 2 s, only when the process has a
 * terminal ({@link java.io.Console#isTerminal()}): never in pipes, files or tests. A daemon thread
 * reads the run's counter ({@link Loops#progress}) five times a second; the data path only stores
 * into that counter. Close it when the run ends (it erases its line).
 */
final class Progress implements AutoCloseable {
    private static final long SHOW_AFTER_MS = 2000;
    private static final int WIDTH = 30;
    private final Thread thread;
    private final PrintWriter err;
    private volatile boolean done;
    private volatile boolean shown;

    private Progress(PerfParams p, PerfRun run, PrintWriter err) {
        this.err = err;
        thread = Thread.ofPlatform().daemon().name("perf-progress").unstarted(() -> loop(p, run));
    }

    /** A bar when stderr can show one and --no-progress was not given; otherwise a no-op. */
    static Progress start(PerfParams p, PerfRun run, PrintWriter err) {
        java.io.Console c = System.console();
        if (!p.progress || c == null || !c.isTerminal()) {
            return new Progress(p, run, err);
        }
        Progress bar = new Progress(p, run, err);
        bar.thread.start();
        return bar;
    }

    private void loop(PerfParams p, PerfRun run) {
        long start = System.currentTimeMillis();
        try {
            Thread.sleep(SHOW_AFTER_MS);
            while (!done) {
                Loops l = run.loops;
                if (l != null) {
                    long v = l.progress.get();
                    double frac;
                    String what;
                    if (p.isDuration()) {
                        frac = Math.min(1, (System.currentTimeMillis() - start) / (p.duration * 1000.0));
                        what = String.format("%ds", p.duration);
                    } else {
                        long total = p.isBw() ? (long) p.iters * p.numQps : p.iters;
                        frac = Math.min(1, v / (double) Math.max(1, total));
                        what = p.size + " B";
                    }
                    int filled = (int) (frac * WIDTH);
                    err.print("\r[" + "#".repeat(filled) + " ".repeat(WIDTH - filled) + "] "
                            + String.format("%3d%% %s", (int) (frac * 100), what));
                    err.flush();
                    shown = true;
                }
                Thread.sleep(200);
            }
        } catch (InterruptedException e) {
            // closing
        }
    }

    @Override
    public void close() {
        done = true;
        if (!thread.isAlive()) {
            return;
        }
        thread.interrupt();
        try {
            thread.join(500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (shown) {
            err.print("\r" + " ".repeat(WIDTH + 20) + "\r");
            err.flush();
        }
    }
}
