// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
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
import org.rdma4j.soft.engine.Pd;
import org.rdma4j.verbs.spi.AbstractProtectionDomain;

/** A soft protection domain. Thread safe. */
final class SoftPd extends AbstractProtectionDomain<SoftContext> implements Pd {
    private static final AtomicInteger HANDLES = new AtomicInteger();
    private final int handle = HANDLES.incrementAndGet();

    SoftPd(SoftContext context) {
        super(context);
        context.device.claim(ResourceLimits.Kind.PD, () -> uses(context));
    }

    @Override
    protected String describe() {
        return "PD " + handle;
    }

    @Override
    protected void destroy() {
        context().device.release(ResourceLimits.Kind.PD);
    }

    @Override
    protected MemoryRegion newMr(MemorySegment segment, int access) {
        return new SoftMr(this, segment, access);
    }

    @Override
    protected MemoryWindow newMw(int type) {
        if (type != 1 && type != 2) {
            throw new VerbsException(Errno.EINVAL, "memory window type " + type + " does not exist (1 or 2)");
        }
        return new SoftMw(this, type == 1 ? MwType.TYPE_1 : MwType.TYPE_2);
    }

    @Override
    public QueuePair createQp(QpInitAttr attr) {
        ensureOpen();
        return new SoftQp(this, attr);
    }

    @Override
    public SharedReceiveQueue createSrq(SrqAttr attr) {
        ensureOpen();
        return new SoftSrq(this, attr);
    }

    @Override
    protected AddressHandle newAh(AhAttr attr) {
        return new SoftAh(this, attr);
    }

    /** Checks that {@code pd} is a soft PD of the same context. */
    static SoftPd same(SoftContext ctx, ProtectionDomain pd) {
        if (!(pd instanceof SoftPd s) || s.context() != ctx) {
            throw new VerbsException(Errno.EINVAL, "the protection domain belongs to another context");
        }
        return s;
    }
}
