// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.QpLayouts.CQ_CQE;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_CQ;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.nativeverbs.abi.IbvQp;
import org.rdma4j.nativeverbs.abi.ProviderOps;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.spi.AbstractCompletionQueue;

/**
 * A libibverbs completion queue ({@code ibv_create_cq}). Polling calls the provider's {@code poll_cq}
 * into a native array of {@code ibv_wc} kept by this CQ and decodes it into the caller's
 * {@link WorkCompletion}s: nothing is allocated. Events the channel handed out must be acknowledged
 * before the CQ is destroyed (libibverbs' {@code ibv_destroy_cq} would wait for them forever), so
 * close refuses with EBUSY until they are. Polling is thread safe (one poller is the fast path).
 */
final class NativeCompletionQueue extends AbstractCompletionQueue<NativeContext, NativeCompletionChannel>
        implements NativeHandle {
    /** Completions fetched per {@code poll_cq} call at most. */
    private static final int POLL_BATCH = 64;

    private final NativeContext context;
    private final MemorySegment cq;
    /** {@code cq.address()}, what a poll passes. */
    private final long cqAddress;
    private final MemorySegment pollCq;
    private final MemorySegment reqNotifyCq;
    private final WcDecoder decoder;
    /** Set (under the decoder's lock) once the CQ is being destroyed: no poll reaches the provider after. */
    private boolean dead;

    NativeCompletionQueue(NativeContext context, int cqe, NativeCompletionChannel channel, int compVector) {
        super(context, channel);
        this.context = context;
        if (cqe < 1) {
            throw new VerbsException(Errno.EINVAL, "cqe " + cqe + " must be at least 1");
        }
        uses(context, channel);
        // a local, not a conditional in the call: invokeExact would type a conditional as Object
        MemorySegment ch = channel == null ? MemorySegment.NULL : channel.handle();
        MemorySegment created = Downcalls.createAs(() -> "ibv_create_cq(cqe=" + cqe + ", comp_vector=" + compVector
                + ") on " + context.device().name() + " failed", this::abandon,
                e -> (MemorySegment) IbvQp.CREATE_CQ.invokeExact(e, context.handle(), cqe, MemorySegment.NULL, ch,
                        compVector));
        this.cq = created.reinterpret(IBV_CQ.byteSize());
        this.cqAddress = cq.address();
        this.pollCq = ContextOps.function(context, ContextOps.POLL_CQ);
        this.reqNotifyCq = ContextOps.function(context, ContextOps.REQ_NOTIFY_CQ);
        this.decoder = new WcDecoder(POLL_BATCH);
        context.track(cq, this);
    }

    /** The {@code struct ibv_cq *}. */
    @Override
    public MemorySegment handle() {
        return cq;
    }

    @Override
    protected String describe() {
        return cq == null ? "CQ (being created) of " + context.device().name()
                : "CQ (" + cq.get(ValueLayout.JAVA_INT, CQ_CQE) + " entries) of " + context.device().name();
    }

    @Override
    protected int busyReason() {
        // libibverbs' ibv_destroy_cq waits until every event it handed out is acknowledged: refuse instead
        return unackedEvents() > 0 || context.unackedAsyncEvents(this) > 0 ? Errno.EBUSY : 0;
    }

    @Override
    protected void destroy() {
        synchronized (decoder) {
            dead = true;
        }
        Downcalls.checkAs(() -> "ibv_destroy_cq of " + describe() + " failed", () -> {
            synchronized (decoder) {
                dead = false;
            }
        }, e -> (int) IbvQp.DESTROY_CQ.invokeExact(e, cq));
        context.untrack(cq);
        decoder.close();
    }

    @Override
    public int cqe() {
        ensureOpen();
        return cq.get(ValueLayout.JAVA_INT, CQ_CQE);
    }

    @Override
    public int poll(WorkCompletion[] wcs, int max) {
        int want = Math.min(Math.min(max, wcs.length), decoder.capacity);
        if (want <= 0) {
            ensureOpen();
            return 0;
        }
        synchronized (decoder) {
            if (dead) {
                ensureOpen();
                throw new IllegalStateException(describe() + " is being destroyed");
            }
            int n;
            try {
                n = (int) ProviderOps.POLL_CQ.invokeExact(pollCq, cqAddress, want, decoder.wcsAddress);
            } catch (Throwable t) {
                throw Downcalls.rethrow(t);
            }
            if (n < 0) {
                throw new VerbsException(n == -1 ? Errno.EIO : -n, "poll_cq on " + describe() + " failed");
            }
            for (int i = 0; i < n; i++) {
                decoder.decode(i, wcs[i]);
            }
            return n;
        }
    }

    @Override
    public void reqNotify(boolean solicitedOnly) {
        ensureOpen();
        int ret;
        try {
            ret = (int) ProviderOps.REQ_NOTIFY_CQ.invokeExact(reqNotifyCq, cq, solicitedOnly ? 1 : 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        if (ret != 0) {
            throw new VerbsException(Downcalls.providerErrno(ret), "req_notify_cq on " + describe() + " failed");
        }
    }

    @Override
    public void resize(int cqe) {
        ensureOpen();
        Downcalls.checkAs(() -> "ibv_resize_cq(" + cqe + ") of " + describe() + " failed",
                e -> (int) IbvQp.RESIZE_CQ.invokeExact(e, cq, cqe));
    }

    @Override
    protected void eventsAcknowledged(int n) {
        Downcalls.status(e -> {
            IbvQp.ACK_CQ_EVENTS.invokeExact(e, cq, n);
            return 0;
        });
    }
}
