package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Errno;
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

/** A protection domain ({@code struct ibv_pd}). Thread safe. */
public final class NativeProtectionDomain extends AbstractResource implements ProtectionDomain {
    private final NativeContext context;
    private final MemorySegment handle;

    NativeProtectionDomain(NativeContext context) {
        this.context = context;
        this.handle = MemorySegment.NULL;
        throw new VerbsException(Errno.EOPNOTSUPP, "ibv_alloc_pd: not implemented yet");
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
        throw new VerbsException(Errno.EOPNOTSUPP, "ibv_reg_mr: not implemented yet");
    }

    @Override
    public MemoryWindow allocMw(MwType type) {
        return allocMw(type.value());
    }

    @Override
    public MemoryWindow allocMw(int type) {
        throw new VerbsException(Errno.EOPNOTSUPP, "ibv_alloc_mw: not implemented yet");
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
        return "PD";
    }

    @Override
    protected void destroy() {}
}
