// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A device port's counters. Every thread that runs the engine increments them, so each is a
 * {@link LongAdder}: increments from different cores do not fight over one cache line, and they are
 * allocation free once warm. Thread safe.
 *
 * <p>The two counters every packet moves ({@link Counter#SENT_PKTS}, {@link Counter#RCVD_PKTS}) also
 * have a {@link Cell} per QP for the in-process fabric's packet-less WRITEs and ACKs: written only
 * inside that QP's task (one writer at a time, handed over by the task's CAS), so an increment is a
 * plain add and an opaque store instead of a {@link LongAdder}'s CAS. A read adds the live cells to
 * the adder; a destroyed QP's cell is folded into the adder ({@link #retire}).
 */
public final class Counters {
    private static final Counter[] ALL = Counter.values();
    private final LongAdder[] values = new LongAdder[ALL.length];
    /** The live QPs' cells (guarded by this). */
    private final Set<Cell> cells = java.util.Collections.newSetFromMap(new IdentityHashMap<>());

    /**
     * One QP's packet counts: incremented only inside that QP's task (its single writer at any time),
     * read by anyone (opaque: a 64-bit value, never torn, possibly a few increments behind).
     */
    public static final class Cell {
        private static final VarHandle SENT;
        private static final VarHandle RCVD;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                SENT = l.findVarHandle(Cell.class, "sent", long.class);
                RCVD = l.findVarHandle(Cell.class, "rcvd", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private long sent;
        private long rcvd;

        Cell() {}

        /** One more packet sent (the owning QP's task only). */
        public void sent() {
            SENT.setOpaque(this, sent + 1);
        }

        /** One more packet received (the owning QP's task only). */
        public void received() {
            RCVD.setOpaque(this, rcvd + 1);
        }

        long get(Counter c) {
            return c == Counter.SENT_PKTS ? (long) SENT.getOpaque(this)
                    : c == Counter.RCVD_PKTS ? (long) RCVD.getOpaque(this) : 0;
        }
    }

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

    /** A new QP's cell, counted from now until {@link #retire}. */
    public synchronized Cell newCell() {
        Cell cell = new Cell();
        cells.add(cell);
        return cell;
    }

    /** A destroyed QP's cell: its counts move into the device's adders. */
    public synchronized void retire(Cell cell) {
        if (cells.remove(cell)) {
            values[Counter.SENT_PKTS.ordinal()].add(cell.get(Counter.SENT_PKTS));
            values[Counter.RCVD_PKTS.ordinal()].add(cell.get(Counter.RCVD_PKTS));
        }
    }

    public synchronized long get(Counter c) {
        long n = values[c.ordinal()].sum();
        if (c == Counter.SENT_PKTS || c == Counter.RCVD_PKTS) {
            for (Cell cell : cells) {
                n += cell.get(c);
            }
        }
        return n;
    }

    /** A sorted snapshot keyed by counter name. */
    public synchronized Map<String, Long> snapshot() {
        Map<String, Long> m = new TreeMap<>();
        for (Counter c : ALL) {
            m.put(c.label, get(c));
        }
        return m;
    }
}
