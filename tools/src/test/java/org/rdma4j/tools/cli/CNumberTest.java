// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

/** The C-style number parsing of the options. */
class CNumberTest {
    @Test
    void numbersAreReadLikeStrtolBase0() {
        CNumber c = new CNumber();
        assertEquals(18515, c.convert("18515"));
        assertEquals(0x4853, c.convert("0x4853"));
        assertEquals(8, c.convert("010"));
        assertEquals(0, c.convert("0"));
        assertEquals(-1, c.convert("-1"));
        assertThrows(TypeConversionException.class, () -> c.convert("12abc"));
        assertThrows(TypeConversionException.class, () -> c.convert("0x"));
        assertThrows(TypeConversionException.class, () -> c.convert("99999999999"));
        assertArrayEquals(new int[] {1}, new int[] {c.convert("+1")});
    }
}
