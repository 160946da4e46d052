package org.rdma4j.soft.engine;

import java.security.SecureRandom;
import java.util.Random;

/**
 * lkey/rkey lookup for one device. Keys carry a random 24-bit index (plus an 8-bit variant), so one
 * key says nothing about another. Lookups are lock-free over a copy-on-write open-addressing table;
 * insertions and removals (control path) copy. Thread safe.
 */
public final class KeyTable {
    private static final class Table {
        final int[] indexes;
        final MemKey[] entries;
        final int size;

        Table(int capacity, int size) {
            indexes = new int[capacity];
            entries = new MemKey[capacity];
            this.size = size;
        }
    }

    private final Random random = new SecureRandom();
    private volatile Table table = new Table(64, 0);

    /** The entry for {@code key} (whose variant must match), or null. Allocation free. */
    public MemKey lookup(int key) {
        Table t = table;
        int mask = t.indexes.length - 1;
        int index = key >>> 8;
        for (int i = mix(index) & mask; ; i = (i + 1) & mask) {
            MemKey e = t.entries[i];
            if (e == null) {
                return null;
            }
            if (t.indexes[i] == index) {
                return e.key == key ? e : null;
            }
        }
    }

    /**
     * A valid memory region covering [addr, addr + len), whatever its key (inline data: libibverbs does
     * not check lkeys for it). Scans the table: for the small inline copies only.
     */
    public MemKey findRegionCovering(long addr, long len) {
        Table t = table;
        for (MemKey e : t.entries) {
            if (e != null && e.valid && !e.isWindow() && e.covers(addr, len) && e.alive()) {
                return e;
            }
        }
        return null;
    }

    /** How many keys the table holds (diagnostics and tests). */
    public int size() {
        return table.size;
    }

    /** Adds {@code entry} under a fresh random index; sets and returns its key. */
    public synchronized int insert(MemKey entry) {
        int index;
        do {
            index = random.nextInt(1 << 24);
        } while (index == 0 || containsIndex(index));
        int variant = random.nextInt(256);
        entry.key = index << 8 | variant;
        Table old = table;
        int capacity = old.indexes.length;
        if ((old.size + 1) * 2 > capacity) {
            capacity *= 2;
        }
        Table t = new Table(capacity, old.size + 1);
        for (int i = 0; i < old.indexes.length; i++) {
            if (old.entries[i] != null) {
                put(t, old.indexes[i], old.entries[i]);
            }
        }
        put(t, index, entry);
        table = t;
        return entry.key;
    }

    /** Removes the entry whose index is that of {@code key}. */
    public synchronized void remove(int key) {
        int index = key >>> 8;
        Table old = table;
        Table t = new Table(old.indexes.length, old.size - 1);
        for (int i = 0; i < old.indexes.length; i++) {
            if (old.entries[i] != null && old.indexes[i] != index) {
                put(t, old.indexes[i], old.entries[i]);
            }
        }
        table = t;
    }

    private boolean containsIndex(int index) {
        Table t = table;
        int mask = t.indexes.length - 1;
        for (int i = mix(index) & mask; t.entries[i] != null; i = (i + 1) & mask) {
            if (t.indexes[i] == index) {
                return true;
            }
        }
        return false;
    }

    private static void put(Table t, int index, MemKey e) {
        int mask = t.indexes.length - 1;
        int i = mix(index) & mask;
        while (t.entries[i] != null) {
            i = (i + 1) & mask;
        }
        t.indexes[i] = index;
        t.entries[i] = e;
    }

    private static int mix(int x) {
        x *= 0x9E3779B9;
        return x ^ (x >>> 16);
    }

    /** {@code ibv_inc_rkey}: the same index with the next variant. */
    public static int incKey(int key) {
        return (key & 0xFFFFFF00) | ((key + 1) & 0xFF);
    }
}
