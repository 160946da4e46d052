// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.lang.foreign.MemorySegment;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * The rules about the memory itself that {@code ibv_reg_mr} and {@code ibv_rereg_mr} (new translation)
 * apply on every provider, with the same errno and the same message: there must be memory (EINVAL), it
 * must be native memory (EINVAL for a heap segment: a NIC cannot DMA into the Java heap, whose objects
 * the collector moves, so code tested on a software device must not depend on it), its arena must be
 * open (EFAULT, as registering an unmapped address), it must have at least one byte (EINVAL, as the
 * kernel's {@code ib_umem_get}), and it must not belong to a confined arena (EINVAL: the device and the
 * completions use a region from other threads, and closing the arena must be able to end the
 * registration from whichever thread closes it). {@link #checkWritable} adds the rule about read-only
 * segments. Stateless; thread safe.
 */
public final class MrMemoryRules {
    /** A thread that never runs: asks a segment whether threads other than its owner may use it. */
    private static final Thread ANOTHER_THREAD = Thread.ofPlatform().unstarted(() -> { });

    private MrMemoryRules() {}

    /**
     * Checks the memory {@code verb} ({@code "ibv_reg_mr"} or {@code "ibv_rereg_mr"}) is asked to register.
     *
     * @param segment the memory
     * @param verb    the call's name, which starts the message
     *
     * @throws VerbsException EINVAL for no memory, a heap segment, zero bytes or a confined arena's
     *     memory, EFAULT for a closed arena's memory
     */
    public static void check(MemorySegment segment, String verb) {
        if (segment == null) {
            throw new VerbsException(Errno.EINVAL, verb + ": no memory to register");
        }
        if (!segment.isNative()) {
            throw new VerbsException(Errno.EINVAL, verb + ": a heap segment cannot be registered (a NIC cannot"
                    + " DMA into the Java heap); allocate the memory from an Arena, e.g."
                    + " Arena.ofShared().allocate(n)");
        }
        if (!segment.scope().isAlive()) {
            throw new VerbsException(Errno.EFAULT, verb + ": the memory's arena is closed");
        }
        if (segment.byteSize() == 0) {
            throw new VerbsException(Errno.EINVAL, verb + ": cannot register zero bytes");
        }
        if (!segment.isAccessibleBy(ANOTHER_THREAD)) {
            throw new VerbsException(Errno.EINVAL, verb + ": memory of a confined arena cannot be registered:"
                    + " the device uses it from other threads (use Arena.ofShared(), Arena.global() or"
                    + " Arena.ofAuto())");
        }
    }

    /**
     * Checks that {@code segment} may be registered with {@code access}: a read-only segment cannot be
     * registered with LOCAL_WRITE (the device would write memory the program may not).
     *
     * @param segment the memory to register
     * @param access  the {@link Access} bits asked for
     * @param verb    the call's name, which starts the message
     * @throws VerbsException EACCES for read-only memory with LOCAL_WRITE
     */
    public static void checkWritable(MemorySegment segment, int access, String verb) {
        if (segment.isReadOnly() && (access & Access.LOCAL_WRITE) != 0) {
            throw new VerbsException(Errno.EACCES, verb + ": read-only memory cannot be registered with LOCAL_WRITE");
        }
    }

    /**
     * Checks that a region whose memory is {@code registered} can still be re-registered: once that
     * memory's arena has closed, the registration ended with it (a native provider deregisters the
     * region as the arena closes), so only closing the region remains.
     *
     * @param registered the memory the region registered
     * @param verb       the call's name, which starts the message
     * @throws VerbsException EINVAL when the region's memory has been freed
     */
    public static void checkStillRegistered(MemorySegment registered, String verb) {
        if (!registered.scope().isAlive()) {
            throw new VerbsException(Errno.EINVAL, verb + ": the region's memory was freed (its arena closed),"
                    + " which ended the registration; close the region and register again");
        }
    }
}
