// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_SRQ;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_SRQ_ATTR;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_SRQ_INIT_ATTR;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.nativeverbs.abi.IbvQp;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractPdResource;

/**
 * A libibverbs shared receive queue ({@code ibv_create_srq}). Posts go to the provider's
 * {@code post_srq_recv} through the context's ops, encoded into native arrays this SRQ keeps. Posting
 * is thread safe; close waits for a post in progress and then refuses new ones.
 */
final class NativeSharedReceiveQueue extends AbstractPdResource<NativeProtectionDomain>
        implements SharedReceiveQueue, NativeHandle {
    private static final long INIT_MAX_WR = offset(IBV_SRQ_INIT_ATTR, "attr.max_wr");
    private static final long INIT_MAX_SGE = offset(IBV_SRQ_INIT_ATTR, "attr.max_sge");
    private static final long INIT_LIMIT = offset(IBV_SRQ_INIT_ATTR, "attr.srq_limit");
    private static final long MAX_WR = offset(IBV_SRQ_ATTR, "max_wr");
    private static final long MAX_SGE = offset(IBV_SRQ_ATTR, "max_sge");
    private static final long LIMIT = offset(IBV_SRQ_ATTR, "srq_limit");
    private static final long HANDLE = offset(IBV_SRQ, "handle");

    private final NativeContext context;
    private final MemorySegment srq;
    private final MemorySegment postSrqRecvFn;
    private final RecvWrEncoder recvWrs;
    /** Set under the post lock once the SRQ is being destroyed. */
    private boolean dead;

    NativeSharedReceiveQueue(NativeProtectionDomain pd, SrqAttr attr) {
        super(pd);
        if (attr == null) {
            throw new VerbsException(Errno.EINVAL, "no SRQ attributes");
        }
        this.context = pd.context();
        uses(pd);
        MemorySegment created;
        int maxSge;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment init = a.allocate(IBV_SRQ_INIT_ATTR);
            init.set(ValueLayout.JAVA_INT, INIT_MAX_WR, attr.maxWr());
            init.set(ValueLayout.JAVA_INT, INIT_MAX_SGE, attr.maxSge());
            init.set(ValueLayout.JAVA_INT, INIT_LIMIT, attr.srqLimit());
            created = Downcalls.createAs(() -> "ibv_create_srq(" + attr + ") on " + context.device().name() + " failed",
                    this::abandon, e -> (MemorySegment) IbvQp.CREATE_SRQ.invokeExact(e, pd.handle(), init));
            maxSge = Math.max(attr.maxSge(), init.get(ValueLayout.JAVA_INT, INIT_MAX_SGE));
        }
        this.srq = created.reinterpret(IBV_SRQ.byteSize());
        this.postSrqRecvFn = ContextOps.function(context, ContextOps.POST_SRQ_RECV);
        this.recvWrs = new RecvWrEncoder(maxSge);
        context.track(srq, this);
    }

    /** The {@code struct ibv_srq *}. */
    @Override
    public MemorySegment handle() {
        return srq;
    }

    @Override
    protected String describe() {
        return srq == null ? "SRQ (being created) of " + context.device().name()
                : "SRQ " + srqn() + " of " + context.device().name();
    }

    @Override
    protected int busyReason() {
        // libibverbs' ibv_destroy_srq would wait forever for async events of this SRQ not yet acknowledged
        return context.unackedAsyncEvents(this) > 0 ? Errno.EBUSY : 0;
    }

    @Override
    protected void destroy() {
        synchronized (recvWrs) {
            dead = true;
        }
        Downcalls.checkAs(() -> "ibv_destroy_srq of " + describe() + " failed", () -> {
            synchronized (recvWrs) {
                dead = false;
            }
        }, e -> (int) IbvQp.DESTROY_SRQ.invokeExact(e, srq));
        context.untrack(srq);
        recvWrs.close();
    }

    /**
     * The kernel's handle of this SRQ, unique in its context. libibverbs reports an SRQ number only for
     * XRC SRQs ({@code ibv_get_srq_num}); a basic SRQ is named by its handle.
     */
    @Override
    public int srqn() {
        return srq.get(ValueLayout.JAVA_INT, HANDLE);
    }

    @Override
    public void postRecv(RecvWorkRequest wr) {
        synchronized (recvWrs) {
            if (dead) {
                ensureOpen();
                throw new IllegalStateException(describe() + " is being destroyed");
            }
            ensureOpen();
            PostException refused = recvWrs.encode(wr);
            int ret = Downcalls.post(postSrqRecvFn, srq.address(), recvWrs.headAddress(), recvWrs.badWrAddress);
            if (ret != 0) {
                int i = recvWrs.badIndex();
                throw new PostException(Downcalls.providerErrno(ret), "post_srq_recv on " + describe() + " failed",
                        NativeQueuePair.nth(wr, i), i);
            }
            if (refused != null) {
                throw refused; // the requests before it were posted
            }
        }
    }

    @Override
    public void modify(SrqAttr attr, int mask) {
        ensureOpen();
        if (attr == null) {
            throw new VerbsException(Errno.EINVAL, "no SRQ attributes");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = a.allocate(IBV_SRQ_ATTR);
            m.set(ValueLayout.JAVA_INT, MAX_WR, attr.maxWr());
            m.set(ValueLayout.JAVA_INT, MAX_SGE, attr.maxSge());
            m.set(ValueLayout.JAVA_INT, LIMIT, attr.srqLimit());
            Downcalls.checkAs(() -> "ibv_modify_srq(" + attr + ", mask " + mask + ") of " + describe() + " failed",
                    e -> (int) IbvQp.MODIFY_SRQ.invokeExact(e, srq, m, mask));
        }
    }

    @Override
    public SrqAttr query() {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = a.allocate(IBV_SRQ_ATTR);
            Downcalls.checkAs(() -> "ibv_query_srq of " + describe() + " failed",
                    e -> (int) IbvQp.QUERY_SRQ.invokeExact(e, srq, m));
            return new SrqAttr(m.get(ValueLayout.JAVA_INT, MAX_WR), m.get(ValueLayout.JAVA_INT, MAX_SGE),
                    m.get(ValueLayout.JAVA_INT, LIMIT));
        }
    }
}
