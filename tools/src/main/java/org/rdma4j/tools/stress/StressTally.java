// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import java.io.PrintWriter;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.Map;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * What every stress run (in-process, client, server) counts as it checks: data errors, duplicate
 * executions, error completions and the first error seen, in the words it will report. The base of
 * {@link StressWorkload}, {@link StressClient} and {@link StressServer}. Not thread safe.
 */
abstract class StressTally {
    long dataErrors;
    long duplicates;
    long errorCompletions;
    String firstError;
    private long lastVerified;
    private long lastProgress;

    /** Counts a data error; the first error of the run is the one reported. */
    final void dataError(String what) {
        dataErrors++;
        error(what);
    }

    /** Records {@code what} if it is the run's first error. */
    final void error(String what) {
        if (firstError == null) {
            firstError = what;
        }
    }

    /** Counts a receive on queue pair {@code pair} that completed in error; true if {@code wc} is one. */
    final boolean failedReceive(WorkCompletion wc, int pair) {
        if (wc.status() == WcStatus.SUCCESS) {
            return false;
        }
        errorCompletions++;
        error("receive on QP " + pair + " completed with " + wc.status());
        return true;
    }

    /**
     * The stall check of the poll loops: {@code verified} not moving for {@link StressTraffic#STALL_NANOS}
     * records an error and returns true. Call with the poll's {@code now}.
     */
    final boolean stalled(long verified, long total, long now) {
        if (verified != lastVerified) {
            lastVerified = verified;
            lastProgress = now;
            return false;
        }
        if (now - lastProgress > StressTraffic.STALL_NANOS) {
            error("no progress for 60 s at " + verified + " of " + total);
            return true;
        }
        return false;
    }

    /** Starts the stall clock of {@link #stalled}. */
    final void progressClock(long now) {
        lastVerified = 0;
        lastProgress = now;
    }

    /**
     * The report's lines on one side's device: the faults its link injected (if it injects any) and
     * its key counters. {@code side} is "client" or "server".
     */
    static void printDevice(PrintWriter out, String side, Map<String, Long> counters) {
        if (counters.containsKey("fault_lost")) {
            long[] f = Faults.injected(counters);
            out.printf(Locale.ROOT, "link faults (%s's outgoing packets): lost=%d duplicated=%d reordered=%d "
                    + "corrupted=%d%n", side, f[0], f[1], f[2], f[3]);
        }
        out.println(side + " device counters (port 1):");
        for (Map.Entry<String, Long> e : StressReport.keyCounters(counters).entrySet()) {
            out.printf(Locale.ROOT, "  %-24s %d%n", e.getKey(), e.getValue());
        }
    }

    /** Reports a run that could not start or could not finish its exchange; the exit code. */
    static int fail(PrintWriter err, String message) {
        err.println("rdma4j stress: " + message);
        err.flush();
        return StressReport.EXIT_FAILED;
    }

    /** Adds {@code r} to the resources to close ({@link StressClient#closeAll}); returns it. */
    static <T extends AutoCloseable> T push(ArrayDeque<AutoCloseable> resources, T r) {
        resources.push(r);
        return r;
    }

    /** The closing line of every stress run's report, for scripts. */
    static String summary(long messages, long delivered, long dataErrors, long duplicates, long retransmits) {
        return "stress: messages=" + messages + " delivered=" + delivered + " data_errors=" + dataErrors
                + " duplicate_executions=" + duplicates + " retransmits=" + retransmits;
    }
}
