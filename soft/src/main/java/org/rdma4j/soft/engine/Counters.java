package org.rdma4j.soft.engine;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A device port's counters. Every thread that runs the engine increments them, so each is a
 * {@link LongAdder}: increments from different cores do not fight over one cache line, and they are
 * allocation free once warm. Thread safe.
 */
public final class Counters {
    private static final Counter[] ALL = Counter.values();
    private final LongAdder[] values = new LongAdder[ALL.length];

    public Counters() {
        for (int i = 0; i < values.length; i++) {
            values[i] = new LongAdder();
        }
    }

    public void inc(Counter c) {
        values[c.ordinal()].increment();
    }

    /** Adds {@code n} (a burst counts as the packets it stands for). */
    public void add(Counter c, long n) {
        values[c.ordinal()].add(n);
    }

    public long get(Counter c) {
        return values[c.ordinal()].sum();
    }

    /** A sorted snapshot keyed by counter name. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new TreeMap<>();
        for (Counter c : ALL) {
            m.put(c.label, values[c.ordinal()].sum());
        }
        return m;
    }
}
