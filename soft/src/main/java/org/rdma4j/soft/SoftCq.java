// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import org.rdma4j.soft.engine.CqRing;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.spi.AbstractCompletionQueue;
import org.rdma4j.verbs.spi.AbstractResource;

/** A soft completion queue. One poller is the fast path; polling is thread safe. */
final class SoftCq extends AbstractCompletionQueue<SoftContext, SoftChannel> implements CqRing.Listener {
    final CqRing ring;
    /** Set once the CQ is being destroyed: its events are no longer queued. */
    volatile boolean dying;

    SoftCq(SoftContext context, int cqe, SoftChannel channel) {
        super(context, channel);
        this.ring = new CqRing(cqe, this);
        context.device.claim(ResourceLimits.Kind.CQ, () -> uses(context, channel));
    }

    @Override
    protected String describe() {
        return "CQ (" + ring.capacity() + " entries)";
    }

    @Override
    protected int busyReason() {
        if (channel() == null) {
            return unackedEvents() > 0 ? Errno.EBUSY : context().refuseWhileUnacked(this, () -> dying = true);
        }
        // Under the channel's lock, so no getEvent hands out an event between the check and the
        // purge: either the event was delivered (and must be acked first: EBUSY) or it is gone.
        // The same for a CQ_ERR under the context's lock (S-LIFE-6). destroy() always follows a 0 here.
        return channel().events.locked(() -> {
            if (unackedEvents() > 0) {
                return Errno.EBUSY;
            }
            int busy = context().refuseWhileUnacked(this, () -> dying = true);
            if (busy == 0) {
                channel().events.purge(cq -> cq == this);
            }
            return busy;
        });
    }

    @Override
    protected void destroy() {
        dying = true;
        context().purgeEvents(this); // a CQ_ERR not read yet
        context().forget(this);
        context().device.release(ResourceLimits.Kind.CQ);
    }

    @Override
    public int cqe() {
        return ring.capacity();
    }

    /**
     * Polls the ring; when it is empty, receives on this thread what the device's link has queued
     * (which may complete work here) and polls again: a busy-polling application needs no hand-off from
     * the link's receive thread.
     */
    @Override
    public int poll(WorkCompletion[] wcs, int max) {
        ensureOpen();
        int n = ring.poll(wcs, max);
        if (n == 0 && Math.min(max, wcs.length) > 0 && context().hca.pollLink() > 0) {
            n = ring.poll(wcs, max);
        }
        return n;
    }

    @Override
    public void reqNotify(boolean solicitedOnly) {
        ensureOpen();
        ring.arm(solicitedOnly);
    }

    @Override
    public void resize(int cqe) {
        ensureOpen();
        if (cqe < 1 || cqe > SoftLimits.MAX_CQE) {
            throw new VerbsException(Errno.EINVAL, "cqe " + cqe + " is outside 1.." + SoftLimits.MAX_CQE);
        }
        if (!ring.resize(cqe)) {
            throw new VerbsException(Errno.EINVAL, "cannot shrink below the " + ring.count() + " queued completions");
        }
    }

    @Override
    public void completionEvent() {
        if (channel() != null) {
            channel().signal(this); // dropped if the channel is closed or this CQ is dying
        }
    }

    @Override
    public void overflow() {
        context().postEvent(AsyncEvent.ofCq(AsyncEventType.CQ_ERR, this));
        for (AbstractResource user : users()) {
            if (user instanceof SoftQp qp) {
                qp.engine.cqError();
            }
        }
    }
}
