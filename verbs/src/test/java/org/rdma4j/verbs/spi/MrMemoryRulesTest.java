// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

class MrMemoryRulesTest {
    @Test
    void heapSegmentsAreEinvalAndTheMessageSaysWhatToUseInstead() {
        for (MemorySegment heap : new MemorySegment[] {MemorySegment.ofArray(new byte[64]),
                MemorySegment.ofArray(new int[16]), MemorySegment.ofBuffer(ByteBuffer.allocate(64))}) {
            VerbsException e = assertThrows(VerbsException.class, () -> MrMemoryRules.check(heap, "ibv_reg_mr"));
            assertEquals(Errno.EINVAL, e.errno());
            assertTrue(e.getMessage().startsWith("EINVAL: ibv_reg_mr: a heap segment cannot be registered"),
                    e.getMessage());
            assertTrue(e.getMessage().contains("Arena.ofShared()"), e.getMessage());
        }
    }

    @Test
    void noMemoryIsEinvalAndAClosedArenasMemoryIsEfault() {
        assertEquals(Errno.EINVAL,
                assertThrows(VerbsException.class, () -> MrMemoryRules.check(null, "ibv_rereg_mr")).errno());
        Arena gone = Arena.ofShared();
        MemorySegment s = gone.allocate(64);
        gone.close();
        assertEquals(Errno.EFAULT,
                assertThrows(VerbsException.class, () -> MrMemoryRules.check(s, "ibv_reg_mr")).errno());
    }

    @Test
    void nativeMemoryOfAnyArenaAndDirectBuffersPass() {
        try (Arena shared = Arena.ofShared(); Arena confined = Arena.ofConfined()) {
            assertDoesNotThrow(() -> MrMemoryRules.check(shared.allocate(64), "ibv_reg_mr"));
            // whether other threads may use it is a provider's question (soft's engine threads), not this rule's
            assertDoesNotThrow(() -> MrMemoryRules.check(confined.allocate(64), "ibv_reg_mr"));
        }
        assertDoesNotThrow(() -> MrMemoryRules.check(Arena.global().allocate(8), "ibv_reg_mr"));
        assertDoesNotThrow(() -> MrMemoryRules.check(MemorySegment.ofBuffer(ByteBuffer.allocateDirect(64)),
                "ibv_reg_mr"));
    }
}
