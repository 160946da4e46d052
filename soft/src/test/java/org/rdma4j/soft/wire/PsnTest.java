// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PsnTest {

    @Test
    void addWrapsAt24Bits() {
        assertEquals(0x000000, Psn.add(0xFFFFFF, 1));
        assertEquals(0x000001, Psn.add(0xFFFFFF, 2));
        assertEquals(0xFFFFFF, Psn.add(0x000000, -1));
        assertEquals(0x000000, Psn.next(0xFFFFFF));
        assertEquals(0x123457, Psn.next(0x123456));
        assertEquals(0x000005, Psn.add(0x000005, Psn.MODULUS));
    }

    @Test
    void maxPsnComesBeforeZeroAfterTheWrap() {
        assertTrue(Psn.compare(0xFFFFFF, 0x000000) < 0);
        assertTrue(Psn.compare(0x000000, 0xFFFFFF) > 0);
        assertTrue(Psn.before(0xFFFFFF, 0x000000));
        assertFalse(Psn.before(0x000000, 0xFFFFFF));
        assertEquals(0, Psn.compare(0xABCDEF, 0xABCDEF));
        assertTrue(Psn.compare(5, 6) < 0);
        assertTrue(Psn.compare(6, 5) > 0);
    }

    @Test
    void compareIsAntisymmetricWithinHalfTheSpace() {
        int[] bases = {0, 1, 0x7FFFFF, 0x800000, 0xFFFFF0, 0xFFFFFF};
        int[] distances = {1, 2, 64, 128, 0x3FFFFF, 0x7FFFFF};
        for (int base : bases) {
            for (int d : distances) {
                int later = Psn.add(base, d);
                assertTrue(Psn.compare(base, later) < 0, base + "+" + d);
                assertTrue(Psn.compare(later, base) > 0, base + "+" + d);
            }
        }
    }

    @Test
    void diffIsTheSignedDistance() {
        assertEquals(2, Psn.diff(0x000001, 0xFFFFFF));
        assertEquals(-2, Psn.diff(0xFFFFFF, 0x000001));
        assertEquals(0, Psn.diff(0x123456, 0x123456));
        assertEquals(0x7FFFFF, Psn.diff(0x7FFFFF, 0));
        assertEquals(-0x800000, Psn.diff(0x800000, 0), "half the space apart reads as behind");
        assertEquals(128, Psn.diff(Psn.add(0xFFFFC0, 128), 0xFFFFC0));
    }
}
