// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The key table finds what it holds, forgets what it removed, and shrinks again. */
class KeyTableTest {
    @Test
    void everyInsertedKeyIsFoundAndRemovedKeysAreNot() {
        KeyTable t = new KeyTable();
        List<MemKey> entries = new ArrayList<>();
        Set<Integer> indexes = new HashSet<>();
        for (int i = 0; i < 20_000; i++) {
            MemKey k = new MemKey(MemKey.MR);
            int key = t.insert(k);
            assertEquals(key, k.key);
            assertTrue(indexes.add(key >>> 8), "indexes are unique");
            assertNotEquals(0, key >>> 8);
            entries.add(k);
        }
        assertEquals(20_000, t.size());
        for (MemKey k : entries) {
            assertSame(k, t.lookup(k.key));
            assertNull(t.lookup(KeyTable.incKey(k.key)), "another variant of the same index is no key");
        }
        for (int i = 0; i < entries.size(); i += 2) {
            t.remove(entries.get(i).key);
        }
        assertEquals(10_000, t.size());
        for (int i = 0; i < entries.size(); i++) {
            MemKey k = entries.get(i);
            if (i % 2 == 0) {
                assertNull(t.lookup(k.key));
            } else {
                assertSame(k, t.lookup(k.key));
            }
        }
    }

    @Test
    void removingAlmostEverythingShrinksTheTable() {
        KeyTable t = new KeyTable();
        List<MemKey> entries = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            MemKey k = new MemKey(MemKey.MR);
            t.insert(k);
            entries.add(k);
        }
        int full = t.capacity();
        assertTrue(full >= 20_000, "at most half full: " + full);
        MemKey kept = entries.get(1234);
        for (MemKey k : entries) {
            if (k != kept) {
                t.remove(k.key);
            }
        }
        assertEquals(1, t.size());
        assertTrue(t.capacity() <= 64, "shrunk back to the minimum, got " + t.capacity());
        assertSame(kept, t.lookup(kept.key));
    }

    @Test
    void insertAndRemoveChurnReusesSlotsWithoutLosingEntries() {
        KeyTable t = new KeyTable();
        MemKey stay = new MemKey(MemKey.MR);
        t.insert(stay);
        for (int i = 0; i < 100_000; i++) {
            MemKey k = new MemKey(MemKey.MW_TYPE2);
            t.insert(k);
            assertSame(k, t.lookup(k.key));
            t.remove(k.key);
            assertNull(t.lookup(k.key));
        }
        assertSame(stay, t.lookup(stay.key));
        assertEquals(1, t.size());
        assertTrue(t.capacity() <= 64);
    }
}
