// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import java.lang.foreign.MemorySegment;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.ProtectionDomain;

/**
 * What every provider's {@link ProtectionDomain} shares: its context, and the refusal of a closed PD
 * (IllegalStateException) before a region, window or address handle is made in it. A provider supplies
 * the making ({@link #newMr}, {@link #newMw}, {@link #newAh}) and {@link #createQp} and
 * {@link #createSrq}, whose argument checks may come before the PD's own (as on the native provider).
 * Thread safe.
 *
 * @param <C> the provider's context type
 */
public abstract class AbstractProtectionDomain<C extends Context> extends AbstractResource
        implements ProtectionDomain {
    private final C context;

    /**
     * A PD of {@code context}; the subclass constructor claims the context with {@link #uses}.
     *
     * @param context the context the PD is allocated in
     */
    protected AbstractProtectionDomain(C context) {
        this.context = context;
    }

    @Override
    public final C context() {
        return context;
    }

    @Override
    public final MemoryRegion regMr(MemorySegment segment, int access) {
        ensureOpen();
        return newMr(segment, access);
    }

    @Override
    public final MemoryWindow allocMw(MwType type) {
        return allocMw(type.value());
    }

    @Override
    public final MemoryWindow allocMw(int type) {
        ensureOpen();
        return newMw(type);
    }

    @Override
    public final AddressHandle createAh(AhAttr attr) {
        ensureOpen();
        return newAh(attr);
    }

    /**
     * {@link #regMr} once the PD is known to be open: the provider's checks and registration.
     *
     * @param segment the memory to register
     * @param access  the {@link org.rdma4j.verbs.Access} bits
     * @return the region
     */
    protected abstract MemoryRegion newMr(MemorySegment segment, int access);

    /**
     * {@link #allocMw} once the PD is known to be open: the provider's checks of the raw type (EINVAL
     * for anything but 1 and 2) and the allocation.
     *
     * @param type the raw {@code enum ibv_mw_type} value
     * @return the window
     */
    protected abstract MemoryWindow newMw(int type);

    /**
     * {@link #createAh} once the PD is known to be open: the provider's checks and the handle.
     *
     * @param attr the address vector
     * @return the handle
     */
    protected abstract AddressHandle newAh(AhAttr attr);
}
