// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * Runs an action when the arena of a registered segment closes, before that arena frees the memory
 * the segment was allocated from: the kernel keeps registered pages pinned and a NIC keeps writing
 * them, so a registration must end before its memory goes back to the allocator. FFM runs an arena's
 * close actions newest first, so an action attached after the allocation (the registration comes
 * after it) runs before the allocation's free. The action is attached with
 * {@link MemorySegment#reinterpret(Arena, Consumer)} to the segment's own scope; memory no arena can
 * close (global, a direct buffer's, an automatic arena's while the region references it) never runs
 * it. The hook references its target only while armed, so a hook left behind in a long-lived arena
 * keeps nothing else alive. Thread safe.
 */
final class ArenaCloseHook implements Consumer<MemorySegment> {
    /** What the hook tells when the memory is about to be freed. */
    interface Target {
        void memoryClosing(ArenaCloseHook hook);
    }

    /**
     * An arena that is only the scope of an existing segment: what {@code reinterpret} needs to attach
     * a close action to that scope. It allocates nothing and cannot be closed through this view.
     */
    private record ScopeOnly(MemorySegment.Scope scope) implements Arena {
        @Override
        public MemorySegment allocate(long byteSize, long byteAlignment) {
            throw new UnsupportedOperationException("a registration's view of an arena allocates nothing");
        }

        @Override
        public void close() {
            throw new UnsupportedOperationException("a registration's view of an arena cannot close it");
        }
    }

    private Target target;
    private boolean fired;

    private ArenaCloseHook() {}

    /**
     * A disarmed hook attached to the scope of {@code segment} (native, not confined, open).
     *
     * @throws VerbsException EFAULT when the arena closed meanwhile
     */
    @SuppressWarnings("restricted")
    static ArenaCloseHook attach(MemorySegment segment, String verb) {
        ArenaCloseHook hook = new ArenaCloseHook();
        try {
            segment.reinterpret(new ScopeOnly(segment.scope()), hook);
        } catch (IllegalStateException closed) {
            throw new VerbsException(Errno.EFAULT, verb + ": the memory's arena is closed");
        }
        return hook;
    }

    /**
     * Arms the hook for {@code t}; false when the arena has already closed (then nothing will tell
     * {@code t}, and the caller ends the registration itself).
     */
    synchronized boolean arm(Target t) {
        if (fired) {
            return false;
        }
        target = t;
        return true;
    }

    /** Nothing to tell any more (the registration ended or moved to other memory). */
    synchronized void disarm() {
        target = null;
    }

    /** Called by FFM as the arena closes, in the closing thread. */
    @Override
    public void accept(MemorySegment ignored) {
        Target t;
        synchronized (this) {
            fired = true;
            t = target;
            target = null;
        }
        if (t != null) {
            t.memoryClosing(this);
        }
    }
}
