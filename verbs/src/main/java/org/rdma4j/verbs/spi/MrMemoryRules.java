// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.lang.foreign.MemorySegment;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * The rules about the memory itself that {@code ibv_reg_mr} and {@code ibv_rereg_mr} (new translation)
 * apply on every provider, with the same errno and the same message: there must be memory (EINVAL), it
 * must be native memory (EINVAL for a heap segment: a NIC cannot DMA into the Java heap, whose objects
 * the collector moves, so code tested on a software device must not depend on it), and its arena must be
 * open (EFAULT, as registering an unmapped address). Stateless; thread safe.
 */
public final class MrMemoryRules {
    private MrMemoryRules() {}

    /**
     * Checks the memory {@code verb} ({@code "ibv_reg_mr"} or {@code "ibv_rereg_mr"}) is asked to register.
     *
     * @param segment the memory
     * @param verb    the call's name, which starts the message
     *
     * @throws VerbsException EINVAL for no memory or a heap segment, EFAULT for a closed arena's memory
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
    }
}
