package org.rdma4j.soft.engine;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLongArray;

/** A device port's counters. Increments are allocation free. Thread safe. */
public final class Counters {
    private static final Counter[] ALL = Counter.values();
    private final AtomicLongArray values = new AtomicLongArray(ALL.length);

    public void inc(Counter c) {
        values.getAndIncrement(c.ordinal());
    }

    public void add(Counter c, long n) {
        values.getAndAdd(c.ordinal(), n);
    }

    public long get(Counter c) {
        return values.get(c.ordinal());
    }

    /** A sorted snapshot keyed by counter name. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new TreeMap<>();
        for (Counter c : ALL) {
            m.put(c.label, values.get(c.ordinal()));
        }
        return m;
    }
}
