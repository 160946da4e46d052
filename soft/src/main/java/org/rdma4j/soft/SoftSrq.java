// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.util.concurrent.atomic.AtomicInteger;
import org.rdma4j.soft.engine.RecvQueue;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.SrqAttrMask;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractPdResource;

/** A soft shared receive queue. Thread safe. */
final class SoftSrq extends AbstractPdResource<SoftPd> implements SharedReceiveQueue {
    private static final AtomicInteger NUMBERS = new AtomicInteger();
    final RecvQueue queue;
    private final int srqn = NUMBERS.incrementAndGet();
    /** Set once the SRQ is being destroyed: its async events are no longer queued. */
    volatile boolean dying;

    SoftSrq(SoftPd pd, SrqAttr attr) {
        super(pd);
        if (attr == null || attr.maxWr() < 1 || attr.maxWr() > SoftLimits.MAX_SRQ_WR || attr.maxSge() < 0
                || attr.maxSge() > SoftLimits.MAX_SRQ_SGE || attr.srqLimit() < 0 || attr.srqLimit() > attr.maxWr()) {
            throw new VerbsException(Errno.EINVAL, "SRQ attributes " + attr + " outside max_wr 1.."
                    + SoftLimits.MAX_SRQ_WR + ", max_sge 0.." + SoftLimits.MAX_SRQ_SGE);
        }
        // max_sge 0 means one, as rxe_srq_chk_init raises it to RXE_MIN_SRQ_SGE
        this.queue = new RecvQueue(attr.maxWr(), Math.max(1, attr.maxSge()), true,
                () -> pd.context().postEvent(AsyncEvent.ofSrq(AsyncEventType.SRQ_LIMIT_REACHED, this)));
        queue.setLimit(attr.srqLimit());
        pd.context().device.claim(ResourceLimits.Kind.SRQ, () -> uses(pd));
    }

    @Override
    protected String describe() {
        return "SRQ " + srqn;
    }

    @Override
    protected int busyReason() {
        // libibverbs' ibv_destroy_srq waits for the acknowledgement of every event it returned (S-LIFE-6)
        return pd().context().refuseWhileUnacked(this, () -> dying = true);
    }

    @Override
    protected void destroy() {
        dying = true;
        pd().context().purgeEvents(this);
        pd().context().forget(this);
        pd().context().device.release(ResourceLimits.Kind.SRQ);
    }

    @Override
    public int srqn() {
        return srqn;
    }

    @Override
    public void postRecv(RecvWorkRequest wr) {
        ensureOpen();
        queue.post(wr);
    }

    @Override
    public void modify(SrqAttr attr, int mask) {
        ensureOpen();
        if ((mask & ~(SrqAttrMask.MAX_WR | SrqAttrMask.LIMIT)) != 0 || mask == 0) {
            throw new VerbsException(Errno.EINVAL, "SRQ attribute mask 0x" + Integer.toHexString(mask));
        }
        boolean resize = (mask & SrqAttrMask.MAX_WR) != 0;
        boolean arm = (mask & SrqAttrMask.LIMIT) != 0;
        // every check before any change (rxe_srq_chk_attr), so a refused modify changes nothing
        if (resize && (attr.maxWr() < 1 || attr.maxWr() > SoftLimits.MAX_SRQ_WR)) {
            throw new VerbsException(Errno.EINVAL, "max_wr " + attr.maxWr() + " outside 1.." + SoftLimits.MAX_SRQ_WR);
        }
        int maxWr = resize ? attr.maxWr() : queue.maxWr();
        if (arm && (attr.srqLimit() < 0 || attr.srqLimit() > maxWr)) {
            throw new VerbsException(Errno.EINVAL, "limit " + attr.srqLimit() + " outside 0..max_wr " + maxWr);
        }
        int limit = arm ? attr.srqLimit() : queue.limit();
        if (resize && limit > 0 && maxWr < limit) {
            throw new VerbsException(Errno.EINVAL, "max_wr " + maxWr + " is below the armed limit " + limit);
        }
        if (resize && !queue.resize(maxWr)) {
            throw new VerbsException(Errno.EINVAL, "cannot shrink below the " + queue.count() + " posted receives");
        }
        if (arm) {
            queue.setLimit(attr.srqLimit());
        }
    }

    @Override
    public SrqAttr query() {
        ensureOpen();
        return new SrqAttr(queue.maxWr(), queue.maxSge(), queue.limit());
    }
}
