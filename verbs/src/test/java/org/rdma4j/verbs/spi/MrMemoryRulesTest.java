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
import org.rdma4j.verbs.Access;
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
    void nativeMemoryOfSharedGlobalAndAutomaticArenasAndDirectBuffersPasses() {
        try (Arena shared = Arena.ofShared()) {
            assertDoesNotThrow(() -> MrMemoryRules.check(shared.allocate(64), "ibv_reg_mr"));
        }
        assertDoesNotThrow(() -> MrMemoryRules.check(Arena.global().allocate(8), "ibv_reg_mr"));
        assertDoesNotThrow(() -> MrMemoryRules.check(Arena.ofAuto().allocate(8), "ibv_reg_mr"));
        assertDoesNotThrow(() -> MrMemoryRules.check(MemorySegment.ofBuffer(ByteBuffer.allocateDirect(64)),
                "ibv_reg_mr"));
    }

    @Test
    void aConfinedArenasMemoryIsEinvalForEveryProviderAndTheMessageNamesTheArenasToUse() {
        try (Arena confined = Arena.ofConfined()) {
            VerbsException e = assertThrows(VerbsException.class,
                    () -> MrMemoryRules.check(confined.allocate(64), "ibv_reg_mr"));
            assertEquals(Errno.EINVAL, e.errno());
            assertTrue(e.getMessage().startsWith("EINVAL: ibv_reg_mr: memory of a confined arena"), e.getMessage());
            assertTrue(e.getMessage().contains("Arena.ofShared()"), e.getMessage());
        }
    }

    @Test
    void zeroBytesAreEinval() {
        try (Arena shared = Arena.ofShared()) {
            VerbsException e = assertThrows(VerbsException.class,
                    () -> MrMemoryRules.check(shared.allocate(64).asSlice(0, 0), "ibv_reg_mr"));
            assertEquals(Errno.EINVAL, e.errno());
        }
    }

    @Test
    void readOnlyMemoryWithLocalWriteIsEaccesAndWithoutItPasses() {
        try (Arena shared = Arena.ofShared()) {
            MemorySegment ro = shared.allocate(64).asReadOnly();
            assertEquals(Errno.EACCES, assertThrows(VerbsException.class,
                    () -> MrMemoryRules.checkWritable(ro, Access.LOCAL_WRITE, "ibv_reg_mr")).errno());
            assertDoesNotThrow(() -> MrMemoryRules.checkWritable(ro, Access.REMOTE_READ, "ibv_reg_mr"));
            assertDoesNotThrow(() -> MrMemoryRules.checkWritable(shared.allocate(8), Access.LOCAL_WRITE, "ibv_reg_mr"));
        }
    }

    @Test
    void aRegionWhoseArenaClosedCannotBeReregisteredAndOneWhoseArenaIsOpenCan() {
        Arena arena = Arena.ofShared();
        MemorySegment s = arena.allocate(64);
        assertDoesNotThrow(() -> MrMemoryRules.checkStillRegistered(s, "ibv_rereg_mr"));
        arena.close();
        VerbsException e = assertThrows(VerbsException.class,
                () -> MrMemoryRules.checkStillRegistered(s, "ibv_rereg_mr"));
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("close the region and register again"), e.getMessage());
    }
}
