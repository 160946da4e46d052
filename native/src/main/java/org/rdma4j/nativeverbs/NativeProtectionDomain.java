// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.nativeverbs.abi.Ibv;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.spi.AbstractProtectionDomain;

/** A protection domain ({@code struct ibv_pd}). Thread safe. */
public final class NativeProtectionDomain extends AbstractProtectionDomain<NativeContext> {
    private final MemorySegment handle;

    NativeProtectionDomain(NativeContext context) {
        super(context);
        uses(context);
        MemorySegment pd = Downcalls.create(() -> "ibv_alloc_pd(" + context.device().name() + ")", this::abandon,
                e -> (MemorySegment) Ibv.ibv_alloc_pd.invokeExact(e, context.handle()));
        this.handle = Native.at(pd, DeviceLayouts.ibv_pd.byteSize());
    }

    /** The {@code struct ibv_pd *}. */
    public MemorySegment handle() {
        return handle;
    }

    @Override
    protected MemoryRegion newMr(MemorySegment segment, int access) {
        return new NativeMemoryRegion(this, segment, access);
    }

    @Override
    protected MemoryWindow newMw(int type) {
        return new NativeMemoryWindow(this, type);
    }

    @Override
    public QueuePair createQp(QpInitAttr attr) {
        return new NativeQueuePair(this, attr);
    }

    @Override
    public SharedReceiveQueue createSrq(SrqAttr attr) {
        return new NativeSharedReceiveQueue(this, attr);
    }

    @Override
    protected AddressHandle newAh(AhAttr attr) {
        return new NativeAddressHandle(this, attr);
    }

    @Override
    protected String describe() {
        return context() == null ? "PD (being created)" : "PD of " + context().device().name();
    }

    @Override
    protected void destroy() {
        Downcalls.check(() -> "ibv_dealloc_pd(" + describe() + ")",
                e -> (int) Ibv.ibv_dealloc_pd.invokeExact(e, handle));
    }
}
