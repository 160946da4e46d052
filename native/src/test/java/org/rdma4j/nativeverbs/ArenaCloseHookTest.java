// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/** How a native registration learns that its memory's arena closes (no device needed). */
class ArenaCloseHookTest {
    @Test
    @SuppressWarnings("restricted")
    void anArmedHookRunsAsTheArenaClosesBeforeWhatWasAttachedEarlierSuchAsTheAllocationsFree() {
        List<String> order = new ArrayList<>();
        Arena arena = Arena.ofShared();
        MemorySegment s = arena.allocate(4096);
        // stands for the allocation's own free, which the arena attached when it allocated
        s.reinterpret(arena, ignored -> order.add("earlier close action"));
        ArenaCloseHook hook = ArenaCloseHook.attach(s, "ibv_reg_mr");
        assertTrue(hook.arm(h -> order.add(s.scope().isAlive() ? "hook (arena open)" : "hook")));
        assertTrue(order.isEmpty(), "nothing runs while the arena is open");
        arena.close();
        assertEquals(List.of("hook", "earlier close action"), order);
    }

    @Test
    void aDisarmedHookTellsNothing() {
        List<String> told = new ArrayList<>();
        Arena arena = Arena.ofShared();
        ArenaCloseHook hook = ArenaCloseHook.attach(arena.allocate(64), "ibv_reg_mr");
        hook.arm(h -> told.add("told"));
        hook.disarm();
        arena.close();
        assertTrue(told.isEmpty());
    }

    @Test
    void armingAfterTheArenaClosedReportsItSoTheRegistrationEndsAtOnce() {
        Arena arena = Arena.ofShared();
        ArenaCloseHook hook = ArenaCloseHook.attach(arena.allocate(64), "ibv_reg_mr");
        arena.close();
        assertFalse(hook.arm(h -> { }), "the arena closed between attach and arm");
    }

    @Test
    void attachingToAClosedArenaIsEfault() {
        Arena arena = Arena.ofShared();
        MemorySegment s = arena.allocate(64);
        arena.close();
        VerbsException e = assertThrows(VerbsException.class, () -> ArenaCloseHook.attach(s, "ibv_reg_mr"));
        assertEquals(Errno.EFAULT, e.errno());
    }

    @Test
    void memoryNoArenaCanCloseNeverRunsTheHook() {
        // global memory and a direct buffer's are freed by nothing a registration could outlive
        ArenaCloseHook global = ArenaCloseHook.attach(Arena.global().allocate(8), "ibv_reg_mr");
        assertTrue(global.arm(h -> { throw new AssertionError("global memory is never freed"); }));
        ArenaCloseHook buffer = ArenaCloseHook.attach(
                MemorySegment.ofBuffer(java.nio.ByteBuffer.allocateDirect(64)), "ibv_reg_mr");
        assertTrue(buffer.arm(h -> { throw new AssertionError("a direct buffer has no arena to close"); }));
    }
}
