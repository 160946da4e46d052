// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Selector;
import java.nio.file.Path;
import org.rdma4j.soft.agent.Agent;
import org.rdma4j.soft.agent.AgentRunner;
import org.rdma4j.soft.agent.IdleStrategy;

/**
 * The receive side of a {@link ShmLink} with a ring of its own: the ring's single consumer at a time
 * (this class's agent, or a thread polling the device: {@link #poll}), which hands what the lanes hold
 * to {@link ShmLanes}; the agent spins briefly after the last packet (not at all while a thread polls),
 * reaps the lanes of dead senders, and then sleeps until a sender wakes it, in futex(2) on the ring's
 * sleeping word or in a selector on the doorbell socket. Thread safe.
 */
final class ShmReceiver implements Agent {
    private static final long REAP_NS = 1_000_000_000L;
    private static final int BATCH = 32;
    /**
     * How long the agent sleeps while standing by, at most: a sender leaves it asleep for a response
     * (an ACK, a READ response) while a thread of this device polls (the ring's polled time), so if
     * that thread stops polling without {@link ShmLink#pollerBlocks()} (it waits on memory), such a
     * response waits this long for the agent. Requests always wake it.
     */
    static final long STANDBY_SLEEP_NS = 1_000_000;
    private static final long POLL_NOTE_NS = 5_000;

    private final ShmLink link;
    private final ShmRing own;
    private final DatagramChannel doorbell;
    private final Selector selector;
    private final ShmLanes lanes;
    private final String roleName;
    private final AgentRunner runner;
    private volatile long lastPollNs = System.nanoTime() - 3_600_000_000_000L;
    // the agent's own
    private long lastWorkNs = System.nanoTime();
    private long reapAtNs = System.nanoTime() + REAP_NS;
    private final ByteBuffer drain = ByteBuffer.allocateDirect(64);
    private final MemorySegment timespec = Arena.ofAuto().allocate(Futex.TIMESPEC_BYTES, 8);

    /**
     * Consumes {@code own} into {@code lanes} and starts the receive agent, which sleeps on the ring's
     * futex word ({@link ShmLink#USE_FUTEX}) or on {@code selector} (the doorbell socket's).
     */
    ShmReceiver(ShmLink link, ShmRing own, DatagramChannel doorbell, Selector selector, ShmLanes lanes,
                String roleName) {
        this.link = link;
        this.own = own;
        this.doorbell = doorbell;
        this.selector = selector;
        this.lanes = lanes;
        this.roleName = roleName;
        lanes.attach(own, ShmLink.USE_FUTEX ? own::wakeSleeper : selector::wakeup);
        this.runner = AgentRunner.start(this, IdleStrategy.NO_OP, t -> link.datagrams.malformed.incrementAndGet());
    }

    /** A poll at {@code now} (System.nanoTime()): noted now and then; consumes the ring if no one else does. */
    int poll(long now) {
        if (now - lastPollNs > POLL_NOTE_NS) {
            lastPollNs = now; // a volatile write only now and then: the agent needs the gist
            own.notePoll(now); // and senders of responses: they leave the agent asleep
        }
        return consumeIfFree();
    }

    /** The polling thread is about to block: the agent stops standing by, senders wake it again. */
    void pollerBlocks() {
        long past = System.nanoTime() - 3_600_000_000_000L;
        lastPollNs = past; // the agent stops standing by at its next look
        own.notePoll(past); // senders wake the agent again
        consumeIfFree(); // a response whose sender left the agent asleep: the poller's last look
    }

    Path ringFile() {
        return own.file();
    }

    long corruptions() {
        return own.corruptions();
    }

    private int consumeIfFree() {
        if (link.closed) {
            return 0;
        }
        Thread me = Thread.currentThread();
        if (link.consumer.get() != null || !link.consumer.compareAndSet(null, me)) {
            return 0;
        }
        try {
            return link.closed ? 0 : own.consume(lanes, BATCH);
        } finally {
            link.consumer.set(null);
        }
    }

    // ------------------------------------------------------------------ the agent

    @Override
    public String roleName() {
        return roleName;
    }

    @Override
    public int doWork() {
        if (link.closed) {
            return 0;
        }
        int n = consumeIfFree();
        boolean backlog = link.flushBacklogs();
        long now = System.nanoTime();
        if (n > 0) {
            lastWorkNs = now;
            return n;
        }
        if (now - reapAtNs > 0) {
            reapAtNs = now + REAP_NS;
            reap();
        }
        boolean polled = now - lastPollNs < ShmLink.POLLING_NS;
        if (!polled && now - lastWorkNs < ShmLink.SPIN_NS) {
            Thread.onSpinWait();
            return 0;
        }
        if (sleep(polled, backlog)) {
            if (polled) {
                link.standbys.incrementAndGet();
            }
            lastWorkNs = System.nanoTime(); // after a wake-up the next packet is likely soon: spin again
        } else {
            Thread.yield(); // a poller holds the ring, or packets came in meanwhile: look again soon
        }
        return 0;
    }

    private void reap() {
        Thread me = Thread.currentThread();
        if (link.consumer.compareAndSet(null, me)) {
            try {
                if (!link.closed) {
                    own.reapDeadProducers(lanes);
                }
            } finally {
                link.consumer.set(null);
            }
        }
    }

    /** Sleeps until woken, at most SLEEP_MS; STANDBY_SLEEP_NS {@code standby}; BACKLOG_RETRY_NS while a {@code backlog} waits. */
    private boolean sleep(boolean standby, boolean backlog) {
        Thread me = Thread.currentThread();
        if (!link.consumer.compareAndSet(null, me)) {
            return false; // a poller is consuming: the ring is being looked at
        }
        boolean sleep;
        try {
            sleep = !link.closed && own.prepareToSleep();
        } finally {
            link.consumer.set(null);
        }
        if (!sleep) {
            return false;
        }
        if (ShmLink.USE_FUTEX) {
            try {
                if (own.sleepUntilWoken(backlog ? ShmLink.BACKLOG_RETRY_NS : standby ? STANDBY_SLEEP_NS
                        : ShmLink.SLEEP_MS * 1_000_000L, timespec)) {
                    link.wakeups.incrementAndGet();
                }
            } finally {
                if (!link.closed) {
                    own.awake();
                }
            }
            return true;
        }
        try {
            if (selector.select(standby || backlog ? Math.max(1, STANDBY_SLEEP_NS / 1_000_000) : ShmLink.SLEEP_MS) > 0) {
                selector.selectedKeys().clear();
                while (doorbell.receive(drain.clear()) != null) {
                    // empty the socket: one wake-up is enough
                }
            }
        } catch (IOException | RuntimeException e) {
            // closed meanwhile, or an I/O error: the next round looks again
        } finally {
            if (!link.closed) {
                own.awake();
            }
        }
        return true;
    }

    /** Once the link is closed: stops the agent, closes the doorbell, waits for a poller in consume, unmaps the ring. */
    void close() {
        if (ShmLink.USE_FUTEX) {
            own.wakeOwnConsumer();
        }
        selector.wakeup();
        runner.close(2_000);
        ShmLink.closeQuietly(selector);
        ShmLink.closeQuietly(doorbell);
        long deadline = System.nanoTime() + 1_000_000_000L;
        while (!link.consumer.compareAndSet(null, Thread.currentThread()) && System.nanoTime() < deadline) {
            Thread.onSpinWait(); // a poller is in consume: it sees closed next time
        }
        own.close();
    }
}
