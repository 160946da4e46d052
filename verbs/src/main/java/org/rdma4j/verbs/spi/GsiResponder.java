// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.lang.foreign.MemorySegment;
import java.util.ServiceLoader;

/**
 * Answers MADs that reach a port whose QP1 nobody has open: the stateless part of a connection
 * manager, as the kernel's ib_cm (always loaded on a Linux host) answers a REQ for a service nobody
 * listens on with a REJ at once. Without it such a MAD is dropped, and the peer learns the port is
 * closed only when its retries run out (a minute with rdma_cm's defaults).
 *
 * <p>A provider calls {@link #installed()} for a MAD to a port without a {@link GsiPort}; the cm module
 * provides the implementation as a service, so it answers in every JVM where it is present, with no
 * thread and no open port per idle device. {@link #answer} runs on the delivering thread (a link's
 * receive thread, or a sender's thread on an in-process fabric): it must be quick, must not block, must
 * not take locks a sender may hold, and must never throw.
 */
public interface GsiResponder {
    /**
     * Looks at one MAD that nobody received and says whether to answer it.
     *
     * @param mad the {@link GsiPort#MAD_SIZE} bytes that arrived (read only for the call)
     * @param from where it came from
     * @param reply {@link GsiPort#MAD_SIZE} bytes to fill with the answer
     * @return true when {@code reply} holds a MAD to send back to {@code from} (same P_Key)
     */
    boolean answer(MemorySegment mad, GsiPort.Source from, MemorySegment reply);

    /** {@return the responder found on the module or class path at the first call, or null if there is none} */
    static GsiResponder installed() {
        return Holder.INSTALLED;
    }

    /** The service lookup, once per JVM. */
    final class Holder {
        static final GsiResponder INSTALLED = ServiceLoader.load(GsiResponder.class,
                GsiResponder.class.getClassLoader()).findFirst().orElse(null);

        private Holder() {
        }
    }
}
