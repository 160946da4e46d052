// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.IdleStrategy;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;

/**
 * rdma_verbs.h on an {@link Endpoint}: the QP it makes, its CQs and completion channels, its PD and the
 * regions registered through it, and the {@code rdma_reg_*}, {@code rdma_post_*} and
 * {@code rdma_get_*_comp} calls on them. The endpoint's connection steps and lifetime are the
 * endpoint's; {@link #release} gives back what this made.
 */
final class EndpointVerbs {
    /** One completion queue and how to wait on it. */
    static final class Side {
        final ReentrantLock lock = new ReentrantLock();
        final WorkCompletion[] slot = WorkCompletion.array(1);
        final IdleStrategy idle = IdleStrategy.backoff();
        volatile CompletionQueue cq;
    }

    private final CmId id;
    private final AtomicBoolean closed;
    private final List<MemoryRegion> regions = new ArrayList<>();
    volatile ProtectionDomain pd;
    private boolean ownsPd;
    volatile QueuePair qp;
    private CompletionQueue ownSendCq;
    private CompletionQueue ownRecvCq;
    private CompletionChannel ownSendChannel;
    private CompletionChannel ownRecvChannel;
    final Side send = new Side();
    final Side recv = new Side();
    private final SendWorkRequest sendWr = new SendWorkRequest();
    private final RecvWorkRequest recvWr = new RecvWorkRequest();

    EndpointVerbs(CmId id, AtomicBoolean closed) {
        this.id = id;
        this.closed = closed;
    }

    /**
     * {@link Endpoint#createQp}: the QP in INIT on the id's device (from a copy of {@code attr}), a PD when
     * none is given, a CQ and channel for each side {@code attr} names none for.
     */
    QueuePair createQp(boolean passive, ProtectionDomain given, QpInitAttr attr) {
        if (qp != null || passive || closed.get()) {
            throw err(closed.get() ? Errno.EBADF : Errno.EINVAL, "create QP for", closed.get() ? "the endpoint is closed"
                    : passive ? "a passive endpoint makes its requests' QPs, not one of its own" : "the endpoint has a QP");
        }
        Context ctx = id.context();
        if (ctx == null) {
            throw err(Errno.EINVAL, "create QP for", "the endpoint is not bound to a device yet");
        }
        QpInitAttr a = copy(attr);
        a.type = id.portSpace().qpType();
        ProtectionDomain p = given;
        if (p == null) {
            p = ctx.allocPd();
            ownsPd = true;
        }
        pd = p;
        if (a.sendCq == null) {
            ownSendChannel = ctx.createCompletionChannel();
            ownSendCq = ctx.createCq(Math.max(1, a.cap.maxSendWr), ownSendChannel, 0);
            a.sendCq = ownSendCq;
        }
        if (a.recvCq == null) {
            ownRecvChannel = ctx.createCompletionChannel();
            ownRecvCq = ctx.createCq(Math.max(1, a.cap.maxRecvWr), ownRecvChannel, 0);
            a.recvCq = ownRecvCq;
        }
        qp = id.createQp(p, a);
        send.cq = a.sendCq;
        recv.cq = a.recvCq;
        return qp;
    }

    /** Registers {@code buf} in {@code p} (the endpoint's PD); the region is closed with the endpoint if still open. */
    MemoryRegion regMr(ProtectionDomain p, MemorySegment buf, int access) {
        if (p == null) {
            throw err(Errno.EINVAL, "register memory with", "the endpoint has no protection domain (no QP was made)");
        }
        MemoryRegion mr = p.regMr(buf, access);
        synchronized (regions) {
            regions.removeIf(MemoryRegion::isClosed);
            regions.add(mr);
        }
        return mr;
    }

    void postRecv(long wrId, MemorySegment buf, MemoryRegion mr) {
        QueuePair q = requireQp();
        int len = checkIn(buf, Objects.requireNonNull(mr, "mr"));
        synchronized (recvWr) {
            recvWr.clear().wrId(wrId).sge(buf.address(), len, mr.lkey());
            q.postRecv(recvWr);
        }
    }

    void postSend(long wrId, MemorySegment buf, MemoryRegion mr, int flags) {
        QueuePair q = requireQp();
        int len = mr == null ? length(buf) : checkIn(buf, mr);
        synchronized (sendWr) {
            sendWr.clear().wrId(wrId).flags(flags).send();
            gather(buf, mr, len);
            q.postSend(sendWr);
        }
    }

    void postRead(long wrId, MemorySegment buf, MemoryRegion mr, int flags, long remoteAddr, int rkey) {
        QueuePair q = requireQp();
        int len = checkIn(buf, Objects.requireNonNull(mr, "mr"));
        synchronized (sendWr) {
            sendWr.clear().wrId(wrId).flags(flags).read(remoteAddr, rkey);
            sendWr.sge(buf.address(), len, mr.lkey());
            q.postSend(sendWr);
        }
    }

    void postWrite(long wrId, MemorySegment buf, MemoryRegion mr, int flags, long remoteAddr, int rkey) {
        QueuePair q = requireQp();
        int len = mr == null ? length(buf) : checkIn(buf, mr);
        synchronized (sendWr) {
            sendWr.clear().wrId(wrId).flags(flags).write(remoteAddr, rkey);
            gather(buf, mr, len);
            q.postSend(sendWr);
        }
    }

    private void gather(MemorySegment buf, MemoryRegion mr, int len) {
        if (mr == null) {
            sendWr.inlineData(buf);
        } else {
            sendWr.sge(buf.address(), len, mr.lkey());
        }
    }

    /** rdma_get_send_comp / rdma_get_recv_comp: the next completion into {@code wc}, ETIMEDOUT past {@code timeoutNs}. */
    void getComp(boolean send, WorkCompletion wc, long timeoutNs) throws InterruptedException {
        if (!getComp(send, wc, timeoutNs, TimeUnit.NANOSECONDS)) {
            throw err(Errno.ETIMEDOUT, send ? "get send completion with" : "get receive completion with",
                    "none within " + CmWords.duration(timeoutNs));
        }
    }

    /** The next completion of the send ({@code send}) or receive CQ into {@code wc}, waiting at most {@code ns}. */
    boolean getComp(boolean send, WorkCompletion wc, long timeout, TimeUnit unit) throws InterruptedException {
        long ns = unit.toNanos(timeout);
        Objects.requireNonNull(wc, "wc");
        Side s = send ? this.send : recv;
        CompletionQueue cq = s.cq;
        String step = send ? "get send completion with" : "get receive completion with";
        if (cq == null) {
            throw err(closed.get() ? Errno.EBADF : Errno.EINVAL, step, closed.get() ? "the endpoint is closed" : "no QP");
        }
        long deadline = System.nanoTime() + Math.min(ns, Long.MAX_VALUE / 4);
        s.lock.lockInterruptibly();
        try {
            CompletionChannel ch = cq.channel();
            while (true) {
                if (closed.get()) {
                    throw err(Errno.EBADF, step, "the endpoint is closed");
                }
                if (cq.poll(s.slot, 1) == 1) {
                    break;
                }
                long left = deadline - System.nanoTime();
                if (ch == null) {
                    // a CQ of the program's without a channel: nothing to wait on, so poll with backoff
                    if (left <= 0 || cq.poll(s.slot, 1, s.idle, left) == 0) {
                        if (Thread.interrupted()) {
                            throw new InterruptedException();
                        }
                        return false;
                    }
                    break;
                }
                cq.reqNotify(false);
                if (cq.poll(s.slot, 1) == 1) {
                    break; // came between the first poll and the arming
                }
                if (left <= 0) {
                    return false;
                }
                CompletionQueue got = ch.getEvent(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left + 999_999)));
                if (got != null) {
                    got.ackEvents(1);
                }
            }
            wc.copyFrom(s.slot[0]);
            return true;
        } catch (IllegalStateException e) {
            if (closed.get()) { // the CQ was destroyed under us by close()
                throw err(Errno.EBADF, step, "the endpoint is closed");
            }
            throw e;
        } finally {
            s.lock.unlock();
        }
    }

    /**
     * Gives back what this made, in order: the CQs and channels (waking a waiting thread: EBADF), the
     * regions still open (newest first), the endpoint's own PD; the first failure is kept.
     */
    RuntimeException release(RuntimeException first) {
        qp = null;
        send.cq = null;
        recv.cq = null;
        first = attempt(ownSendCq, first);
        first = attempt(ownRecvCq, first);
        first = attempt(ownSendChannel, first); // wakes a thread in getSendComp (EBADF)
        first = attempt(ownRecvChannel, first);
        List<MemoryRegion> mrs;
        synchronized (regions) {
            mrs = new ArrayList<>(regions);
            regions.clear();
        }
        for (int i = mrs.size() - 1; i >= 0; i--) {
            first = attempt(mrs.get(i), first);
        }
        if (ownsPd) {
            first = attempt(pd, first);
        }
        return first;
    }

    /** The error of {@code step} on the endpoint: errno, the step, its peer (or local address), what. */
    private VerbsException err(int errno, String step, String what) {
        return CmWords.error(errno, step, id.remoteAddress(), id.localAddress(), what);
    }

    private QueuePair requireQp() {
        QueuePair q = qp;
        if (q == null) {
            throw err(closed.get() ? Errno.EBADF : Errno.EINVAL, "post to", closed.get() ? "the endpoint is closed" : "no QP");
        }
        return q;
    }

    private int length(MemorySegment buf) {
        long n = buf.byteSize();
        if (n > Integer.MAX_VALUE) {
            throw err(Errno.EINVAL, "post to", "a work request carries at most 2^31-1 bytes, got " + n);
        }
        return (int) n;
    }

    private int checkIn(MemorySegment buf, MemoryRegion mr) {
        int len = length(buf);
        long a = buf.address();
        if (!buf.isNative() || a < mr.address() || a + len > mr.address() + mr.length()) {
            throw err(Errno.EINVAL, "post to", "the buffer [0x" + Long.toHexString(a) + ", +" + len
                    + ") is not inside the region [0x" + Long.toHexString(mr.address()) + ", +" + mr.length() + ")");
        }
        return len;
    }

    static RuntimeException attempt(AutoCloseable c, RuntimeException first) {
        if (c == null) {
            return first;
        }
        try {
            c.close();
        } catch (RuntimeException e) {
            if (first == null) {
                return e;
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        return first;
    }

    /** {@return a copy of {@code attr} (its capabilities copied too) the endpoint may change} */
    static QpInitAttr copy(QpInitAttr attr) {
        QpInitAttr a = new QpInitAttr(attr.type, attr.sendCq, attr.recvCq);
        a.cap = attr.cap == null ? new QpInitAttr().cap : attr.cap.copy();
        a.srq = attr.srq;
        a.sqSigAll = attr.sqSigAll;
        return a;
    }
}
