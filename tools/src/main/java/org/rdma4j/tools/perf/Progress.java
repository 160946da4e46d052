// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * A progress bar on stderr for runs that take more than about 2 s, only when the process has a
 * terminal ({@link java.io.Console#isTerminal()}): never in pipes, files or tests. A daemon thread
 * reads the run's counter ({@link Loops#progress}) five times a second; the data path only stores
 * into that counter. The label names the size being measured and the time left for it (an -a run
 * says which size of how many). The bar erases itself before the run prints a result
 * ({@link PerfRun#beforeOutput}), so a report never starts on the bar's line, and when closed.
 */
final class Progress implements AutoCloseable {
    private static final long SHOW_AFTER_MS = 2000;
    private static final int WIDTH = 30;
    private final Thread thread;
    private final PrintWriter err;
    private final PerfRun run;
    private final Object lock = new Object();
    private volatile boolean done;
    /** Length of the line on screen, 0 when none is; guarded by lock. */
    private int shownLength;
    private long sizeSeen = -1;
    private long sizeStartMs;

    private Progress(PerfParams p, PerfRun run, PrintWriter err) {
        this.err = err;
        this.run = run;
        thread = Thread.ofPlatform().daemon().name("perf-progress").unstarted(() -> loop(p, run));
    }

    /** A bar when stderr can show one and --no-progress was not given; otherwise a no-op. */
    static Progress start(PerfParams p, PerfRun run, PrintWriter err) {
        java.io.Console c = System.console();
        if (!p.progress || c == null || !c.isTerminal()) {
            return new Progress(p, run, err);
        }
        Progress bar = attach(p, run, err);
        bar.thread.start();
        return bar;
    }

    /** A bar that erases itself before the run prints, drawn by {@link #draw} only (tests; start starts the ticks). */
    static Progress attach(PerfParams p, PerfRun run, PrintWriter err) {
        Progress bar = new Progress(p, run, err);
        run.beforeOutput = bar::erase;
        return bar;
    }

    private void loop(PerfParams p, PerfRun run) {
        try {
            Thread.sleep(SHOW_AFTER_MS);
            while (!done) {
                Loops l = run.loops;
                if (l != null) {
                    draw(p, l.progress.get(), System.currentTimeMillis());
                }
                Thread.sleep(200);
            }
        } catch (InterruptedException e) {
            // closing
        }
    }

    /** Draws the bar for {@code done} units of the current size at {@code nowMs}. */
    void draw(PerfParams p, long units, long nowMs) {
        long size = p.size;
        if (size != sizeSeen) {
            sizeSeen = size;
            sizeStartMs = nowMs;
        }
        double frac;
        if (p.isDuration()) {
            frac = Math.min(1, (nowMs - sizeStartMs) / (p.duration * 1000.0));
        } else {
            long total = p.isBw() ? (long) p.iters * p.numQps : p.iters;
            frac = Math.min(1, units / (double) Math.max(1, total));
        }
        String text = line(frac, size, p.all, nowMs - sizeStartMs);
        synchronized (lock) {
            if (done) {
                return;
            }
            err.print("\r" + text + " ".repeat(Math.max(0, shownLength - text.length())));
            err.flush();
            shownLength = Math.max(shownLength, text.length()); // the padding covers what was there
        }
    }

    /**
     * The bar's text: {@code [#####     ]  45% 65536 B, 3 s left}; with -a the size is followed by
     * its power of 2 ({@code (-a: 2^16)}); the time left is projected from {@code elapsedMs} on this size.
     */
    static String line(double frac, long size, boolean all, long elapsedMs) {
        int filled = (int) (frac * WIDTH);
        StringBuilder sb = new StringBuilder("[").append("#".repeat(filled)).append(" ".repeat(WIDTH - filled))
                .append("] ").append(String.format(Locale.ROOT, "%3d%% %d B", (int) (frac * 100), size));
        if (all) {
            sb.append(String.format(Locale.ROOT, " (-a: 2^%d)", Long.numberOfTrailingZeros(size)));
        }
        if (frac > 0.01 && elapsedMs > 0) {
            long leftS = Math.round(elapsedMs * (1 - frac) / frac / 1000.0);
            sb.append(", ").append(leftS < 60 ? leftS + " s left" : leftS / 60 + " min " + leftS % 60 + " s left");
        } else {
            sb.append(", estimating time left");
        }
        return sb.toString();
    }

    /** Takes the bar off the screen (the next tick draws it again, below what was printed meanwhile). */
    void erase() {
        synchronized (lock) {
            if (shownLength > 0) {
                err.print("\r" + " ".repeat(shownLength) + "\r");
                err.flush();
                shownLength = 0;
            }
        }
    }

    @Override
    public void close() {
        done = true;
        if (thread.isAlive()) {
            thread.interrupt();
            try {
                thread.join(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        erase();
        run.beforeOutput = PerfRun.NOTHING;
    }
}
