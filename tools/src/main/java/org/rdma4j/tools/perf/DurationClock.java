// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

/**
 * perftest's -D state machine (its SIGALRM handler {@code catch_alarm}) driven by the clock instead of
 * signals: {@code margin} seconds of warm-up, {@code duration - 2 * margin} seconds of sampling (from
 * {@link #sampleStart} to {@link #sampleEnd}), {@code margin} seconds more, then the end. Polled from
 * the data path: {@link #state(long)} allocates nothing. One thread.
 */
final class DurationClock {
    static final int START = 0;
    static final int SAMPLE = 1;
    static final int STOP_SAMPLE = 2;
    static final int END = 3;

    private final long toSample;
    private final long toStop;
    private final long toEnd;
    /** Volatile: read by the --cpu_util watcher (written three times a run, read rarely on the data path). */
    private volatile int state = START;
    long sampleStart;
    long sampleEnd;

    /** @param now the run's start, in the run's ns clock */
    DurationClock(long now, int durationS, int marginS) {
        long m = marginS * 1_000_000_000L;
        long d = durationS * 1_000_000_000L;
        toSample = now + m;
        toStop = toSample + d - 2 * m;
        toEnd = toStop + m;
    }

    /** The state last recorded (for watchers on other threads: the sample window's edges are published with it). */
    int state() {
        return state;
    }

    /** The state at {@code now}, recording the sample window's edges as they pass. */
    int state(long now) {
        if (state == START && now >= toSample) {
            state = SAMPLE;
            sampleStart = now;
        }
        if (state == SAMPLE && now >= toStop) {
            state = STOP_SAMPLE;
            sampleEnd = now;
        }
        if (state == STOP_SAMPLE && now >= toEnd) {
            state = END;
        }
        return state;
    }
}
