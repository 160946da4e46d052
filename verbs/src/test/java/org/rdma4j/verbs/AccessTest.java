// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class AccessTest {
    @Test
    void bitsAreThoseOfIbvAccessFlags() {
        assertEquals(1, Access.LOCAL_WRITE);
        assertEquals(2, Access.REMOTE_WRITE);
        assertEquals(4, Access.REMOTE_READ);
        assertEquals(8, Access.REMOTE_ATOMIC);
        assertEquals(16, Access.MW_BIND);
        assertEquals(32, Access.ZERO_BASED);
        assertEquals(64, Access.ON_DEMAND);
        assertEquals(127, Access.ALL);
    }

    @Test
    void toStringNamesEachBit() {
        assertEquals("0", Access.toString(0));
        assertEquals("LOCAL_WRITE|REMOTE_READ", Access.toString(Access.LOCAL_WRITE | Access.REMOTE_READ));
        assertEquals("MW_BIND|BIT9", Access.toString(Access.MW_BIND | 1 << 9));
    }
}
