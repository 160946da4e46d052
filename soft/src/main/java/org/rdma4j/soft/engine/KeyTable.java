// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.security.SecureRandom;
import java.util.Random;

/**
 * lkey/rkey lookup for one device. Keys carry a random 24-bit index (plus an 8-bit variant), so one
 * key says nothing about another. An open-addressing table: lookups are lock-free and allocation-free;
 * insertions and removals (control path, one at a time) change a slot in place and publish it with a
 * release store, so registering costs O(1) however full the table is. The table is rebuilt only when it
 * grows past half full (with tombstones) or shrinks below an eighth, so rebuilds are amortized O(1) too.
 * Thread safe.
 */
public final class KeyTable {
    private static final int MIN_CAPACITY = 64;
    /** Marks a removed entry: probing goes on past it, an insert may reuse it. */
    private static final MemKey TOMBSTONE = new MemKey(MemKey.MR);
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(MemKey[].class);

    private static final class Table {
        final int[] indexes;
        final MemKey[] entries;

        Table(int capacity) {
            indexes = new int[capacity];
            entries = new MemKey[capacity];
        }
    }

    private final Random random = new SecureRandom();
    private volatile Table table = new Table(MIN_CAPACITY);
    /** Live entries and tombstones in {@link #table} (guarded by this). */
    private int size;
    private int tombstones;

    /** The entry for {@code key} (whose variant must match), or null. Allocation free. */
    public MemKey lookup(int key) {
        Table t = table;
        int mask = t.indexes.length - 1;
        int index = key >>> 8;
        for (int i = mix(index) & mask; ; i = (i + 1) & mask) {
            MemKey e = (MemKey) SLOT.getAcquire(t.entries, i);
            if (e == null) {
                return null;
            }
            if (e != TOMBSTONE && t.indexes[i] == index) {
                return e.key == key ? e : null;
            }
        }
    }

    /**
     * A valid memory region covering [addr, addr + len), whatever its key (inline data: libibverbs does
     * not check lkeys for it). Scans the table: only when an inline gather's own lkey does not cover it.
     */
    public MemKey findRegionCovering(long addr, long len) {
        Table t = table;
        for (int i = 0; i < t.entries.length; i++) {
            MemKey e = (MemKey) SLOT.getAcquire(t.entries, i);
            if (e != TOMBSTONE && MemKey.check(e, MemKey.Use.LOCAL, null, addr, len, 0, null) == KeyVerdict.OK) {
                return e;
            }
        }
        return null;
    }

    /** How many keys the table holds (diagnostics and tests). */
    public synchronized int size() {
        return size;
    }

    /** The number of slots (tests: the table shrinks again). */
    synchronized int capacity() {
        return table.entries.length;
    }

    /** Adds {@code entry} under a fresh random index; sets and returns its key. */
    public synchronized int insert(MemKey entry) {
        int index;
        do {
            index = random.nextInt(1 << 24);
        } while (index == 0 || containsIndex(table, index));
        int variant = random.nextInt(256);
        entry.key = index << 8 | variant;
        if ((size + tombstones + 1) * 2 > table.entries.length) {
            rebuild(size + 1);
        }
        Table t = table;
        int mask = t.indexes.length - 1;
        int i = mix(index) & mask;
        for (MemKey e; (e = t.entries[i]) != null && e != TOMBSTONE; i = (i + 1) & mask) {
            // probe to the first free or removed slot
        }
        if (t.entries[i] == TOMBSTONE) {
            tombstones--;
        }
        t.indexes[i] = index;
        SLOT.setRelease(t.entries, i, entry); // readers see the index before the entry
        size++;
        return entry.key;
    }

    /** Removes the entry whose index is that of {@code key}. */
    public synchronized void remove(int key) {
        int index = key >>> 8;
        Table t = table;
        int mask = t.indexes.length - 1;
        for (int i = mix(index) & mask; t.entries[i] != null; i = (i + 1) & mask) {
            if (t.entries[i] != TOMBSTONE && t.indexes[i] == index) {
                SLOT.setRelease(t.entries, i, TOMBSTONE);
                size--;
                tombstones++;
                if (size * 8 < t.entries.length && t.entries.length > MIN_CAPACITY) {
                    rebuild(size);
                }
                return;
            }
        }
    }

    /** A fresh table at most a quarter full with {@code live} entries, without tombstones (guarded by this). */
    private void rebuild(int live) {
        int capacity = MIN_CAPACITY;
        while (capacity < live * 4L) {
            capacity <<= 1;
        }
        Table old = table;
        Table t = new Table(capacity);
        int cmask = capacity - 1;
        for (int i = 0; i < old.entries.length; i++) {
            MemKey e = old.entries[i];
            if (e != null && e != TOMBSTONE) {
                int j = mix(old.indexes[i]) & cmask;
                while (t.entries[j] != null) {
                    j = (j + 1) & cmask;
                }
                t.indexes[j] = old.indexes[i];
                t.entries[j] = e;
            }
        }
        tombstones = 0;
        table = t; // volatile: publishes the filled arrays
    }

    private static boolean containsIndex(Table t, int index) {
        int mask = t.indexes.length - 1;
        for (int i = mix(index) & mask; t.entries[i] != null; i = (i + 1) & mask) {
            if (t.entries[i] != TOMBSTONE && t.indexes[i] == index) {
                return true;
            }
        }
        return false;
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
