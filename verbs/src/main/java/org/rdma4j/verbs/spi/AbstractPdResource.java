// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import org.rdma4j.verbs.ProtectionDomain;

/**
 * A resource made in a protection domain (a QP, SRQ, MR, MW or AH): keeps its PD for {@link #pd()}
 * so that no provider writes that accessor again. The subclass constructor still claims the PD with
 * {@link #uses} at the point its own rules say. Thread safe.
 *
 * @param <P> the provider's protection domain type
 */
public abstract class AbstractPdResource<P extends ProtectionDomain> extends AbstractResource {
    /** Volatile: a memory region may move to another PD ({@link #movePd}). */
    private volatile P pd;

    /**
     * A resource of {@code pd}; nothing is claimed yet.
     *
     * @param pd the protection domain the resource is made in
     */
    protected AbstractPdResource(P pd) {
        this.pd = pd;
    }

    /** {@return the protection domain of this resource} */
    public final P pd() {
        return pd;
    }

    /**
     * Moves the resource to {@code to} (ibv_rereg_mr with IBV_REREG_MR_CHANGE_PD): claims {@code to},
     * releases the PD used so far, then {@link #pd()} answers {@code to}. Nothing changes when
     * {@code to} is the current PD.
     *
     * @param to the new protection domain
     * @throws IllegalStateException if {@code to} is closed (nothing changes then)
     */
    protected final void movePd(P to) {
        P from = pd;
        if (to != from) {
            replaceUse((AbstractResource) from, (AbstractResource) to);
            pd = to;
        }
    }
}
