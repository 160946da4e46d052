// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.util.Map;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractContext;
import org.rdma4j.verbs.spi.AsyncEventAcks;
import org.rdma4j.verbs.spi.EventQueue;
import org.rdma4j.verbs.spi.GsiPort;
import org.rdma4j.verbs.spi.QueueEventPoller;

/** An open soft device. Thread safe. */
final class SoftContext extends AbstractContext implements EventQueue.Owner, GsiPort.GsiAccess {
    final SoftDevice device;
    final Hca hca;
    private final EventQueue<AsyncEvent> events = new EventQueue<>("context", SoftContext::live);
    /** Events returned and not yet acknowledged, per QP, CQ and SRQ (S-LIFE-6). */
    private final AsyncEventAcks acks = new AsyncEventAcks();

    SoftContext(SoftDevice device) {
        this.device = device;
        this.hca = device.hca;
    }

    /** False for an event naming a QP, CQ or SRQ that is being destroyed (the kernel drops those). */
    private static boolean live(AsyncEvent e) {
        return !(e.qp() instanceof SoftQp q && q.dying) && !(e.cq() instanceof SoftCq c && c.dying)
                && !(e.srq() instanceof SoftSrq s && s.dying);
    }

    @Override
    protected String describe() {
        return "context of " + device.name();
    }

    @Override
    protected void destroy() {
        device.contextClosed(this);
        events.close(); // wakes every waiter with EBADF
        acks.clear();
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public DeviceAttr queryDevice() {
        ensureOpen();
        return SoftLimits.deviceAttr(hca.guid, device.limits);
    }

    private void checkPort(int portNum) {
        if (portNum != 1) {
            throw new VerbsException(Errno.EINVAL, device.name() + " has one port (1), not " + portNum);
        }
    }

    @Override
    public PortAttr queryPort(int portNum) {
        ensureOpen();
        checkPort(portNum);
        return SoftLimits.portAttr(hca.portUp());
    }

    @Override
    public GidEntry queryGidEntry(int portNum, int index) {
        ensureOpen();
        checkPort(portNum);
        if (index < 0 || index >= SoftLimits.GID_TABLE_LEN) {
            throw new VerbsException(Errno.EINVAL, "GID index " + index + " is outside the table (0.."
                    + (SoftLimits.GID_TABLE_LEN - 1) + ")");
        }
        Gid g = hca.gid(index);
        if (g == null) {
            throw new VerbsException(Errno.ENODATA, "GID index " + index + " is empty");
        }
        return new GidEntry(index, portNum, g, GidEntry.GidType.ROCE_V2);
    }

    @Override
    public int queryPkey(int portNum, int index) {
        ensureOpen();
        org.rdma4j.verbs.spi.PortRules.checkPkeyIndex(portNum, 1, index, SoftLimits.MAX_PKEYS);
        return 0xFFFF;
    }

    @Override
    protected ProtectionDomain newPd() {
        return new SoftPd(this);
    }

    @Override
    protected CompletionChannel newChannel() {
        return new SoftChannel(this);
    }

    @Override
    public CompletionQueue createCq(int cqe, CompletionChannel channel, int compVector) {
        ensureOpen();
        if (cqe < 1 || cqe > SoftLimits.MAX_CQE) {
            throw new VerbsException(Errno.EINVAL, "cqe " + cqe + " is outside 1.." + SoftLimits.MAX_CQE);
        }
        if (compVector < 0 || compVector >= SoftLimits.NUM_COMP_VECTORS) {
            throw new VerbsException(Errno.EINVAL, "comp_vector " + compVector + " >= num_comp_vectors "
                    + SoftLimits.NUM_COMP_VECTORS);
        }
        SoftChannel ch = null;
        if (channel != null) {
            if (!(channel instanceof SoftChannel sc) || sc.context != this) {
                throw new VerbsException(Errno.EINVAL, "the completion channel belongs to another context");
            }
            ch = sc;
        }
        return new SoftCq(this, cqe, ch);
    }

    @Override
    public AsyncEvent getAsyncEvent(long timeoutMs) throws InterruptedException {
        return events.take(timeoutMs, acks::reported); // counted under the queue's lock, see refuseWhileUnacked
    }

    @Override
    public boolean hasAsyncEvent() {
        return events.hasEvent();
    }

    @Override
    protected EventPoller newEventPoller() {
        return new QueueEventPoller();
    }

    @Override
    public EventQueue<?> eventQueue() {
        return events;
    }

    @Override
    public void ackAsyncEvent(AsyncEvent event) {
        acks.acknowledge(event);
    }

    @Override
    public Map<String, Long> counters(int portNum) {
        ensureOpen();
        checkPort(portNum);
        Map<String, Long> m = hca.counters.snapshot();
        org.rdma4j.soft.link.Link link = hca.link();
        if (link != null) {
            m.putAll(link.counters());
        }
        return m;
    }

    /**
     * QP1 of port 1, sending from GID {@code gidIndex}: EINVAL for another port or an empty or
     * out-of-table index, EBUSY while a GsiPort of the device is open (from any context), EBADF on a
     * closed context.
     */
    @Override
    public GsiPort openGsi(int portNum, int gidIndex) {
        if (isClosed()) {
            throw new VerbsException(Errno.EBADF, describe() + " is closed");
        }
        checkPort(portNum);
        Gid gid = gidIndex >= 0 && gidIndex < SoftLimits.GID_TABLE_LEN ? hca.gid(gidIndex) : null;
        if (gid == null) {
            throw new VerbsException(Errno.EINVAL, "GID index " + gidIndex + " of " + device.name()
                    + " is outside the table or empty");
        }
        int token = hca.gsi.open();
        if (token < 0) {
            throw new VerbsException(Errno.EBUSY, "QP1 of " + device.name() + " port 1 is already open");
        }
        return new SoftGsiPort(this, hca.gsi, token, gid);
    }

    void postEvent(AsyncEvent e) {
        events.offer(e);
    }

    /** Drops the unread events naming {@code r} (a QP, CQ or SRQ being destroyed). */
    void purgeEvents(Object r) {
        events.purge(e -> e.qp() == r || e.cq() == r || e.srq() == r);
    }

    /**
     * For the {@code busyReason} of a QP, CQ or SRQ {@code r}: EBUSY while an event of it was returned
     * and not acknowledged (S-LIFE-6); else runs {@code dying} (after which no event of {@code r} is
     * queued), drops its unread events and returns 0. Under the queue's lock, so no getAsyncEvent hands
     * one out between the check and the purge; the destroy that follows a 0 calls {@link #forget}.
     */
    int refuseWhileUnacked(Object r, Runnable dying) {
        return events.locked(() -> {
            if (acks.outstanding(r) > 0) {
                return Errno.EBUSY;
            }
            dying.run();
            purgeEvents(r);
            return 0;
        });
    }

    /** {@code r} is destroyed: an acknowledgement of one of its events is EINVAL from now on. */
    void forget(Object r) {
        acks.forget(r);
    }
}
