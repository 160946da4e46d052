// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.nativeverbs.abi.Ibv;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractPdResource;

/**
 * A memory window ({@code struct ibv_mw}). ibv_alloc_mw, ibv_dealloc_mw and ibv_bind_mw are inline in
 * verbs.h: like them, this calls the provider's {@code ctx->ops} pointers. Thread safe.
 */
public final class NativeMemoryWindow extends AbstractPdResource<NativeProtectionDomain>
        implements MemoryWindow, NativeHandle {
    private static final long MW_RKEY = offset(DeviceLayouts.ibv_mw, "rkey");
    private static final long MW_TYPE = offset(DeviceLayouts.ibv_mw, "type");
    private static final long B_WR_ID = offset(DeviceLayouts.ibv_mw_bind, "wr_id");
    private static final long B_SEND_FLAGS = offset(DeviceLayouts.ibv_mw_bind, "send_flags");
    private static final long B_MR = offset(DeviceLayouts.ibv_mw_bind, "bind_info.mr");
    private static final long B_ADDR = offset(DeviceLayouts.ibv_mw_bind, "bind_info.addr");
    private static final long B_LENGTH = offset(DeviceLayouts.ibv_mw_bind, "bind_info.length");
    private static final long B_ACCESS = offset(DeviceLayouts.ibv_mw_bind, "bind_info.mw_access_flags");

    private final MemorySegment handle;
    private final MwType type;

    NativeMemoryWindow(NativeProtectionDomain pd, int type) {
        super(pd);
        if (type != MwType.TYPE_1.value() && type != MwType.TYPE_2.value()) {
            throw new VerbsException(Errno.EINVAL, "ibv_alloc_mw: no memory window type " + type);
        }
        MemorySegment alloc = pd.context().op("alloc_mw");
        if (alloc.equals(MemorySegment.NULL)) {
            throw new VerbsException(Errno.EOPNOTSUPP, "ibv_alloc_mw: " + pd.context().device().name()
                    + " has no memory windows");
        }
        uses(pd);
        MemorySegment mw = Downcalls.create(() -> "ibv_alloc_mw(" + pd.context().device().name() + ", type " + type + ")",
                this::abandon, e -> (MemorySegment) Ibv.ALLOC_MW_OP.invokeExact(alloc, e, pd.handle(), type));
        this.handle = Native.at(mw, DeviceLayouts.ibv_mw.byteSize());
        this.type = handle.get(ValueLayout.JAVA_INT, MW_TYPE) == 1 ? MwType.TYPE_1 : MwType.TYPE_2;
    }

    /** The {@code struct ibv_mw *}. */
    @Override
    public MemorySegment handle() {
        return handle;
    }

    @Override
    public MwType type() {
        return type;
    }

    @Override
    public int rkey() {
        ensureOpen();
        return handle.get(ValueLayout.JAVA_INT, MW_RKEY);
    }

    /**
     * A type 2 window was bound with {@code rkey} by a posted BIND_MW request: the provider does not write
     * {@code ibv_mw.rkey} for it (a C program keeps the key it chose), so this object records it there.
     */
    void boundTo(int rkey) {
        handle.set(ValueLayout.JAVA_INT, MW_RKEY, rkey);
    }

    @Override
    public int nextRkey() {
        int rkey = rkey();
        return (rkey & ~0xff) | ((rkey + 1) & 0xff);
    }

    @Override
    public synchronized int bind(QueuePair qp, long wrId, int sendFlags, MemoryRegion mr, long addr, long length,
            int access) {
        ensureOpen();
        if (type != MwType.TYPE_1) {
            throw new VerbsException(Errno.EINVAL, "ibv_bind_mw: only type 1 windows are bound with ibv_bind_mw");
        }
        if (!(qp instanceof NativeQueuePair nqp)) {
            throw new VerbsException(Errno.EINVAL, "ibv_bind_mw: " + qp + " is not a native QP");
        }
        NativeMemoryRegion nmr = null;
        if (mr != null) {
            if (!(mr instanceof NativeMemoryRegion m)) {
                throw new VerbsException(Errno.EINVAL, "ibv_bind_mw: " + mr + " is not a native MR");
            }
            nmr = m;
            if (nmr.pd() != pd()) {
                throw new VerbsException(Errno.EPERM, "ibv_bind_mw: the MR is in another PD than the window");
            }
        } else if (addr != 0 || length != 0) {
            throw new VerbsException(Errno.EINVAL, "ibv_bind_mw: an address range without an MR");
        }
        MemorySegment bindMw = pd().context().op("bind_mw");
        if (bindMw.equals(MemorySegment.NULL)) {
            throw new VerbsException(Errno.EOPNOTSUPP, "ibv_bind_mw: not supported by " + pd().context().device().name());
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment b = arena.allocate(DeviceLayouts.ibv_mw_bind);
            b.set(ValueLayout.JAVA_LONG, B_WR_ID, wrId);
            b.set(ValueLayout.JAVA_INT, B_SEND_FLAGS, sendFlags);
            b.set(ValueLayout.ADDRESS, B_MR, nmr == null ? MemorySegment.NULL : nmr.handle());
            b.set(ValueLayout.JAVA_LONG, B_ADDR, addr);
            b.set(ValueLayout.JAVA_LONG, B_LENGTH, length);
            b.set(ValueLayout.JAVA_INT, B_ACCESS, access);
            Downcalls.check(() -> "ibv_bind_mw(" + describe() + ")",
                    e -> (int) Ibv.BIND_MW_OP.invokeExact(bindMw, e, nqp.handle(), handle, b));
            return handle.get(ValueLayout.JAVA_INT, MW_RKEY);
        }
    }

    @Override
    protected String describe() {
        return "MW (" + type + ") of " + pd();
    }

    @Override
    protected void destroy() {
        MemorySegment dealloc = pd().context().op("dealloc_mw");
        Downcalls.check(() -> "ibv_dealloc_mw(" + describe() + ")",
                e -> (int) Ibv.DEALLOC_MW_OP.invokeExact(dealloc, e, handle));
    }
}
