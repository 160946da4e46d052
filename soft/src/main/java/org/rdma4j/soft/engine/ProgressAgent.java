// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.util.concurrent.ConcurrentLinkedQueue;
import org.rdma4j.soft.agent.Agent;
import org.rdma4j.soft.agent.IdleStrategy;
import org.rdma4j.soft.agent.NanoClock;
import org.rdma4j.soft.link.Link;

/**
 * The device's progress agent: runs the QP tasks that were deferred to it (inline nesting too deep) and
 * those whose timer (ACK timeout, RNR wait) is due, taken from a {@link TimerHeap}; QPs without a timer
 * are never visited, so an idle device costs no CPU however many QPs it holds. One thread (the device's
 * runner, or a test) calls {@link #doWork()}; {@link #timerArmed} and {@link #defer} are thread safe.
 */
final class ProgressAgent implements Agent {
    /**
     * How soon the agent looks again at a QP whose timer is due but whose task is running on another
     * thread (which runs the timer work before it goes idle): short, but not a spin.
     */
    static final long BUSY_RETRY_NS = 20_000L;

    private final Hca hca;
    private final NanoClock clock;
    private final TimerHeap timers = new TimerHeap();
    private final ConcurrentLinkedQueue<QpEngine> deferred = new ConcurrentLinkedQueue<>();
    /** When the agent means to wake next (Long.MAX_VALUE while it works: every arm then wakes it). */
    private volatile long plannedWakeNs = Long.MAX_VALUE;
    /** Wakes the thread running the agent (nothing when a test drives it). */
    private volatile Runnable waker = () -> { };

    ProgressAgent(Hca hca, NanoClock clock) {
        this.hca = hca;
        this.clock = clock;
    }

    void setWaker(Runnable w) {
        waker = w;
    }

    @Override
    public String roleName() {
        return hca.name + "-progress";
    }

    /** Has the agent run {@code qp}'s task soon. */
    void defer(QpEngine qp) {
        deferred.add(qp);
        waker.run();
    }

    /**
     * {@code qp} set a timer for {@code deadlineNs}. Costs one volatile read when the QP is already
     * queued under an earlier deadline (the common case: an ACK timer pushed back by a new packet).
     */
    void timerArmed(QpEngine qp, long deadlineNs) {
        if (qp.timerQueuedNs <= deadlineNs) {
            return;
        }
        synchronized (timers) {
            timers.schedule(qp, deadlineNs);
        }
        if (deadlineNs < plannedWakeNs) {
            waker.run();
        }
    }

    /** Takes a destroyed QP's timer out. */
    void remove(QpEngine qp) {
        synchronized (timers) {
            timers.remove(qp);
        }
    }

    /** QPs with a timer queued (tests). */
    int timersQueued() {
        synchronized (timers) {
            return timers.size();
        }
    }

    @Override
    public int doWork() {
        plannedWakeNs = Long.MAX_VALUE;
        int work = 0;
        QpEngine later;
        while ((later = deferred.poll()) != null) {
            later.task.runTask();
            work++;
        }
        long now = clock.nanoTime();
        for (;;) {
            QpEngine qp;
            synchronized (timers) {
                qp = timers.pollDue(now);
            }
            if (qp == null) {
                break;
            }
            if (hca.qp(qp.qpn) != qp) {
                continue; // destroyed meanwhile
            }
            // The QP's own deadline: it may have moved later (or gone) since it was queued.
            long d = qp.nextDeadlineNs();
            if (d <= now) {
                // A timer is about to judge an ACK or response missing: take in first what the link
                // has already received (rxe's completer takes the responses queued for it before it
                // retries), so one that waits unread behind a descheduled poller, a parked receive
                // agent or the tasks this loop ran before counts. Then the deadline may have moved.
                takeInArrived();
                d = qp.nextDeadlineNs();
            }
            if (d <= now) {
                qp.task.runTask();
                work++;
                d = qp.nextDeadlineNs();
                if (d <= now) {
                    d = now + BUSY_RETRY_NS; // still due: busy on another thread, which goes round again
                }
            }
            if (d != Long.MAX_VALUE) {
                synchronized (timers) {
                    timers.schedule(qp, d);
                }
            }
        }
        long next;
        synchronized (timers) {
            next = timers.nextDeadlineNs();
        }
        plannedWakeNs = next;
        return work;
    }

    private void takeInArrived() {
        Link l = hca.link();
        if (l != null) {
            l.receiveArrived();
        }
    }

    /** How long the runner may park: until the next deadline, or until woken. */
    long nanosToWait() {
        if (!deferred.isEmpty()) {
            return 0;
        }
        long next = plannedWakeNs;
        return next == Long.MAX_VALUE ? Long.MAX_VALUE : next - clock.nanoTime();
    }

    IdleStrategy idleStrategy() {
        return IdleStrategy.parkUntil(this::nanosToWait);
    }
}
