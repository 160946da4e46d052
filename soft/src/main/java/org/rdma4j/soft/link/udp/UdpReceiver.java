// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.soft.agent.Agent;
import org.rdma4j.soft.agent.AgentRunner;
import org.rdma4j.soft.agent.IdleStrategy;

/**
 * The UDP link's receive side: who reads the socket when. One receiver at a time holds the receive
 * token (so packets reach the device in the order the socket queued them, and the device's receive
 * batch has one user): this class's agent while it receives, a thread polling the device for one
 * non-blocking receive ({@link #poll()}, {@link #receiveArrived()}), or a thread waiting for a
 * completion event ({@link #await}). While threads poll the agent stands by in doubling parks, and
 * what the receiving thread sends meanwhile is deferred by the {@link UdpSendStage}, which this class
 * tells who receives and when the agent waits in the socket. See {@link UdpLink}. Thread safe.
 */
final class UdpReceiver implements Agent {
    /** A {@link #poll()} at most this long ago means a thread is polling the link now. */
    static final long POLLING_NS = 50_000;
    /**
     * How long the receive agent first parks while threads poll (-Drdma4j.udp.standbyMicros, default
     * 100); each further park in a row is twice as long, up to {@link #MAX_STANDBY_NS}.
     */
    static final long STANDBY_NS = Math.max(10, Long.getLong("rdma4j.udp.standbyMicros", 100)) * 1_000;
    /**
     * The longest stand-by park (-Drdma4j.udp.maxStandbyMicros, default 4000): how late the agent may
     * notice that polling stopped without {@link #pollerBlocks()}. On two cores, where two busy-polling
     * processes already take both, every wake-up of an agent takes a core from a poller: with parks of
     * at most 1 ms the busy RC round trip between two JVMs had a p99 of 0.6-1.1 ms on a quiet host
     * (its p50 11 us), with at most 4 ms or 10 ms 47-66 us; with two CPU hogs beside the pair the median
     * (18-21 us) and mean were the same with 1 and 4 ms (2026-12-07, PERFORMANCE.md). Earlier, parks of
     * 5 ms had moved a loaded round trip's median from 0.1 to 3 ms, and parks of 100 us only (no
     * doubling) put a second mode near 340 us into it (docs/decisions/0004-udp-the-polling-thread-receives.md).
     */
    static final long MAX_STANDBY_NS = Math.max(STANDBY_NS,
            Long.getLong("rdma4j.udp.maxStandbyMicros", 4_000) * 1_000);
    /** At most this many receive batches per {@link #receiveArrived()}. */
    static final int ARRIVED_BATCHES = 16;
    /** The receive agent's longest wait in poll(2): it re-checks for close this often. */
    static final int AGENT_WAIT_MS = 100;
    /** The longest single wait of {@link #await}: a waiter re-checks its deadline, interrupts and close. */
    static final long AWAIT_SLICE_NS = 50_000_000;
    // The receive token's states.
    private static final int FREE = 0;
    private static final int HELD = 1;
    private static final int CLOSED = 2;

    /** The last receive filled a whole batch, so more datagrams are probably queued. */
    private volatile boolean backlogged;

    /** Who may read the socket: FREE, HELD by the agent or a poller, or CLOSED (see the class comment). */
    private final AtomicInteger receiveToken = new AtomicInteger(FREE);
    /** What a receive needs; used only by the token's holder. */
    private final UdpDatagrams.Scratch receiveScratch = new UdpDatagrams.Scratch();
    /** Whether the socket has a non-blocking receive, so callers may poll it. */
    private final boolean pollable;
    /** When a thread last called {@link #poll()} (System.nanoTime()). */
    private volatile long lastPollNs = System.nanoTime() - 3_600_000_000_000L;
    /** A poller is about to block: the agent receives now, whatever {@link #lastPollNs} says. */
    private volatile boolean agentWanted;
    /** Tests: the agent stays out of the socket; only {@link #poll()} receives. */
    private volatile boolean agentHeld;
    /** The agent has seen {@link #agentHeld} and is out of the socket. */
    private volatile boolean agentOut;
    final AtomicLong polledPackets = new AtomicLong();
    final AtomicLong agentPackets = new AtomicLong();
    final AtomicLong awaitWakeups = new AtomicLong();
    /** A thread is inside {@link #await}'s wait for the socket (tests). */
    private volatile boolean awaiting;
    private final UdpSocket socket;
    private final UdpDatagrams datagrams;
    private final UdpSendStage stage;
    private final String roleName;
    private final AgentRunner runner;
    /** The next stand-by park: doubles while threads keep polling, back to the first after a receive. */
    private long standbyNs = STANDBY_NS;

    /** Starts the receive agent of {@code socket}, which hands what it receives to {@code datagrams}. */
    UdpReceiver(UdpSocket socket, UdpDatagrams datagrams, UdpSendStage stage, String roleName) {
        this.socket = socket;
        this.datagrams = datagrams;
        this.stage = stage;
        this.roleName = roleName;
        this.pollable = socket.canReceiveNow();
        this.runner = AgentRunner.start(this, IdleStrategy.NO_OP, t -> {
            if (!stage.closed) {
                datagrams.malformed.incrementAndGet();
            }
        });
    }

    /**
     * Receives what has arrived, on the calling thread, if no other thread is receiving on this link
     * right now; returns the packets handled (0 also in CHANNEL mode, or closed). Never blocks. Marks
     * the link as polled, so the receive agent stands by (see the class comment).
     */
    int poll() {
        if (!pollable) {
            return 0;
        }
        lastPollNs = System.nanoTime();
        Thread current = Thread.currentThread();
        if (stage.lastPoller != current) {
            stage.lastPoller = current;
        }
        stage.endDoorbell();
        if (stage.deferred > 0 && !stage.heldForReply(current)) {
            stage.flushDeferred();
        }
        if (receiveToken.get() != FREE || !receiveToken.compareAndSet(FREE, HELD)) {
            return 0; // another thread is receiving: what it takes it hands to the device
        }
        stage.deferring = Thread.currentThread();
        try {
            return receiveHolding(polledPackets);
        } finally {
            stage.deferring = null;
            stage.flushIfAgentInSocket();
        }
    }

    /**
     * Receives what the socket holds now on the calling thread (the progress agent, before a timer
     * judges an ACK missing), up to {@link #ARRIVED_BATCHES} batches, not as a poller; -1 while another
     * thread holds the receive token (it is receiving: see {@link #backlogged()}).
     */
    int receiveArrived() {
        int total = 0;
        for (int i = 0; pollable && !stage.closed && i < ARRIVED_BATCHES; i++) {
            if (receiveToken.get() != FREE || !receiveToken.compareAndSet(FREE, HELD)) {
                return i == 0 ? -1 : total;
            }
            int n = receiveBatch(agentPackets);
            total += n;
            if (n < UdpSocket.BATCH) {
                break;
            }
        }
        return total;
    }

    /** One receive with the token held; what the device answers (ACKs) leaves in one sendmmsg after it. */
    private int receiveBatch(AtomicLong tally) {
        stage.deferring = Thread.currentThread();
        try {
            return receiveHolding(tally);
        } finally {
            stage.deferring = null;
            stage.flushDeferred();
        }
    }

    /** Receives what is queued now with the receive token held, gives the token back, counts into {@code tally}. */
    private int receiveHolding(AtomicLong tally) {
        int n;
        try {
            n = socket.receiveNow(datagrams, receiveScratch);
            noteBatch(n);
        } finally {
            receiveToken.set(FREE);
        }
        if (n > 0) {
            tally.addAndGet(n);
        }
        return n;
    }

    /**
     * Waits on the calling thread for datagrams (poll(2), at most {@link #AWAIT_SLICE_NS} at a time)
     * and receives them, holding the receive token meanwhile: the agent and pollers stay out, and a
     * thread waiting for a completion event receives its own packet instead of being woken by the
     * agent after it did. -1 in CHANNEL mode, once closed, or while another thread holds the token.
     */
    int await(long timeoutNs) {
        if (!pollable || stage.closed) {
            return -1;
        }
        stage.endDoorbell();
        stage.flushDeferred();
        if (receiveToken.get() != FREE || !receiveToken.compareAndSet(FREE, HELD)) {
            return -1;
        }
        int n = 0;
        lastPollNs = System.nanoTime(); // the agent stands by while threads wait here too
        try {
            long ns = Math.min(Math.max(timeoutNs, 0), AWAIT_SLICE_NS);
            int ms = (int) Math.max(1, (ns + 999_999) / 1_000_000);
            awaiting = true;
            boolean readable = !stage.closed && socket.awaitReadable(ms);
            awaiting = false;
            if (readable) {
                stage.deferring = Thread.currentThread();
                n = socket.receiveNow(datagrams, receiveScratch);
                noteBatch(n);
            }
        } finally {
            stage.deferring = null;
            lastPollNs = System.nanoTime();
            receiveToken.set(FREE);
            stage.flushIfAgentInSocket();
        }
        if (n > 0) {
            polledPackets.addAndGet(n);
        }
        return n;
    }

    /** Whether a thread is waiting in {@link #await} now (for tests). */
    boolean awaiting() {
        return awaiting;
    }

    void wakeAwait() {
        if (pollable && !stage.closed) {
            awaitWakeups.incrementAndGet();
            socket.wakeReceiver();
        }
    }

    void pollerBlocks() {
        stage.endDoorbell();
        stage.flushDeferred();
        if (pollable && !stage.closed) {
            agentWanted = true;
            runner.wake();
        }
    }

    /**
     * Keeps the receive agent out of the socket ({@code true}), so only {@link #poll()} receives, or
     * lets it receive again. Waits (up to 2 s, as long as a blocked receive can take) until the agent is
     * out; false if it is not, or the mode cannot poll. For tests of the poll path.
     */
    boolean holdReceiveAgent(boolean hold) throws InterruptedException {
        if (!pollable) {
            return false;
        }
        agentHeld = hold;
        runner.wake();
        if (!hold) {
            return true;
        }
        long end = System.nanoTime() + 2_000_000_000L;
        while (!agentOut && System.nanoTime() - end < 0) {
            Thread.sleep(1);
        }
        return agentOut;
    }

    private void noteBatch(int n) {
        boolean full = n == UdpSocket.BATCH;
        if (backlogged != full) {
            backlogged = full;
        }
    }

    // ------------------------------------------------------------------ the agent

    private int standBy() {
        LockSupport.parkNanos(standbyNs);
        standbyNs = Math.min(standbyNs * 2, MAX_STANDBY_NS);
        return 0;
    }

    @Override
    public String roleName() {
        return roleName;
    }

    @Override
    public int doWork() {
        if (stage.closed) {
            return 0;
        }
        if (pollable) {
            stage.flushDeferred(); // what a poller deferred waits at most one stand-by park
            if (agentHeld) {
                agentOut = true;
                LockSupport.parkNanos(STANDBY_NS);
                return 0;
            }
            agentOut = false;
            if (agentWanted) {
                agentWanted = false;
                standbyNs = STANDBY_NS;
            } else if (System.nanoTime() - lastPollNs < POLLING_NS) {
                return standBy(); // a thread polls: stand by, out of its way
            }
            // Wait for a datagram without the token, so a poller or an event waiter can take the
            // socket meanwhile; a waiter that holds it is receiving: stand by.
            if (receiveToken.get() != FREE) {
                return standBy();
            }
            standbyNs = STANDBY_NS;
            // A poller that defers a packet after the flag is set sends it itself (poll()); one that
            // deferred before is flushed here: both fields are volatile, so one of the two sees it.
            stage.agentInSocket = true;
            boolean readable;
            try {
                stage.flushDeferred();
                readable = socket.agentAwaitReadable(AGENT_WAIT_MS);
            } finally {
                stage.agentInSocket = false;
            }
            if (!readable) {
                return 0; // the timeout, to re-check for close
            }
            if (!receiveToken.compareAndSet(FREE, HELD)) {
                return standBy(); // another thread took the socket first
            }
            return receiveBatch(agentPackets);
        }
        int n = socket.receive(datagrams, receiveScratch); // CHANNEL: blocks, up to its timeout
        noteBatch(n);
        if (n > 0) {
            agentPackets.addAndGet(n);
        }
        return n;
    }

    @Override
    public void onClose() {
        // A poller holds the token for one non-blocking receive at most: wait for it, so the socket
        // never closes under a receive (bounded, should a poller thread be descheduled for long).
        long end = System.nanoTime() + 1_000_000_000L;
        while (pollable && !receiveToken.compareAndSet(FREE, CLOSED) && System.nanoTime() - end < 0) {
            Thread.yield();
        }
        socket.close();
    }

    /**
     * Whether more datagrams are probably queued or being taken in: the last receive filled a whole batch,
     * or a thread other than an idle event waiter holds the receive token ({@link UdpLink#receiveBacklogged}).
     */
    boolean backlogged() {
        // also while a thread other than an idle event waiter holds the receive token: it is taking
        // packets in now (or was descheduled doing so), and an ACK may be among them
        return backlogged || receiveToken.get() == HELD && !awaiting;
    }

    /** Stops the agent (waiting up to {@code timeoutMs}): the socket closes on it, after its last receive. */
    void close(long timeoutMs) {
        runner.close(timeoutMs);
    }
}
