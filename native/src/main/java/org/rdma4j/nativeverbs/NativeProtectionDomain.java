// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.nativeverbs.abi.Ibv;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractResource;
import org.rdma4j.verbs.spi.ffm.ErrnoCapture;

/** A protection domain ({@code struct ibv_pd}). Thread safe. */
public final class NativeProtectionDomain extends AbstractResource implements ProtectionDomain {
    private final NativeContext context;
    private final MemorySegment handle;

    NativeProtectionDomain(NativeContext context) {
        uses(context);
        this.context = context;
        ErrnoCapture errno = ErrnoCapture.perThread();
        MemorySegment pd;
        try {
            pd = (MemorySegment) Ibv.ibv_alloc_pd.invokeExact(errno.segment(), context.handle());
        } catch (Throwable t) {
            abandon();
            throw Native.unexpected(t);
        }
        if (pd.equals(MemorySegment.NULL)) {
            abandon();
            throw Native.fail(0, errno, "ibv_alloc_pd(" + context.device().name() + ")");
        }
        this.handle = Native.at(pd, DeviceLayouts.ibv_pd.byteSize());
    }

    /** The {@code struct ibv_pd *}. */
    public MemorySegment handle() {
        return handle;
    }

    @Override
    public NativeContext context() {
        return context;
    }

    @Override
    public MemoryRegion regMr(MemorySegment segment, int access) {
        ensureOpen();
        return new NativeMemoryRegion(this, segment, access);
    }

    @Override
    public MemoryWindow allocMw(MwType type) {
        return allocMw(type.value());
    }

    @Override
    public MemoryWindow allocMw(int type) {
        ensureOpen();
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
    public AddressHandle createAh(AhAttr attr) {
        return new NativeAddressHandle(this, attr);
    }

    @Override
    protected String describe() {
        return context == null ? "PD (being created)" : "PD of " + context.device().name();
    }

    @Override
    protected void destroy() {
        ErrnoCapture errno = ErrnoCapture.perThread();
        int rc;
        try {
            rc = (int) Ibv.ibv_dealloc_pd.invokeExact(errno.segment(), handle);
        } catch (Throwable t) {
            throw Native.unexpected(t);
        }
        if (rc != 0) {
            throw Native.fail(rc, errno, "ibv_dealloc_pd(" + describe() + ")");
        }
    }
}
