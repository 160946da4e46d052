// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link;

import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import java.util.ArrayDeque;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.soft.agent.Agent;
import org.rdma4j.soft.agent.AgentRunner;
import org.rdma4j.soft.agent.IdleStrategy;
import org.rdma4j.soft.agent.NanoClock;
import org.rdma4j.soft.wire.Icrc;

/**
 * A link that misbehaves on purpose, reproducibly from a seed: it loses, duplicates, reorders and
 * corrupts packets. Every packet it passes is materialized and carries an ICRC, so the receiving
 * device catches corruption exactly as a RoCE NIC would (and counts it). Reordered packets are held
 * back and delivered after later ones, or by the link's flusher agent after at most
 * {@link #HOLD_NANOS} (the agent sleeps while nothing is held). Thread safe.
 */
public final class FaultyLink implements Link {
    /** Probabilities per packet, each 0..1. */
    public record Faults(double loss, double duplicate, double reorder, double corrupt) {
        public Faults {
            for (double d : new double[] {loss, duplicate, reorder, corrupt}) {
                if (!(d >= 0 && d <= 1)) {
                    throw new IllegalArgumentException("fault probability " + d + " is outside 0..1");
                }
            }
        }

        public static final Faults NONE = new Faults(0, 0, 0, 0);
    }

    /** Longest time a reordered packet is held back. */
    public static final long HOLD_NANOS = 200_000;

    private final Link inner;
    private final Faults faults;
    private final SplittableRandom random;
    private final PacketPool pool = new PacketPool();
    private final Icrc icrc = new Icrc();
    private final ArrayDeque<Packet> held = new ArrayDeque<>();
    private final ArrayDeque<Long> heldSince = new ArrayDeque<>();
    private final AtomicLong lost = new AtomicLong();
    private final AtomicLong duplicated = new AtomicLong();
    private final AtomicLong reordered = new AtomicLong();
    private final AtomicLong corrupted = new AtomicLong();
    private final NanoClock clock;
    private final Flusher flusher = new Flusher();
    /** The thread running {@link #flusher}; null when the caller drives it ({@link #flusher()}). */
    private final AgentRunner flusherRunner;

    public FaultyLink(Link inner, Faults faults, long seed) {
        this(inner, faults, seed, NanoClock.SYSTEM, true);
    }

    /**
     * A faulty link on {@code clock}; without {@code flusherThread} the caller runs {@link #flusher()}
     * (a test on a fake clock).
     */
    public FaultyLink(Link inner, Faults faults, long seed, NanoClock clock, boolean flusherThread) {
        this.inner = inner;
        this.faults = faults;
        this.random = new SplittableRandom(seed);
        this.clock = clock;
        flusherRunner = flusherThread
                ? AgentRunner.start(flusher, IdleStrategy.parkUntil(flusher::nanosToWait), t -> { })
                : null;
    }

    /** The agent that sends held packets once they have waited {@link #HOLD_NANOS}. */
    public Agent flusher() {
        return flusher;
    }

    @Override
    public void send(Packet packet) {
        Packet dup = null;
        Packet release = null;
        boolean hold;
        synchronized (this) {
            if (random.nextDouble() < faults.loss()) {
                lost.incrementAndGet();
                packet.release();
                return;
            }
            packet.materialize();
            if (random.nextDouble() < faults.duplicate()) {
                duplicated.incrementAndGet();
                dup = packet.copyTo(pool.acquire());
            }
            seal(packet);
            if (dup != null) {
                seal(dup);
            }
            hold = random.nextDouble() < faults.reorder();
            if (hold) {
                reordered.incrementAndGet();
                held.add(packet);
                heldSince.add(clock.nanoTime());
            } else if (!held.isEmpty()) {
                release = held.poll();
                heldSince.poll();
            }
        }
        if (!hold) {
            inner.send(packet);
        } else if (flusherRunner != null) {
            flusherRunner.wake(); // it may sleep with nothing held
        }
        if (dup != null) {
            inner.send(dup);
        }
        if (release != null) {
            inner.send(release);
        }
    }

    /** Appends the ICRC and maybe flips a bit (under the lock: uses the shared random and Icrc). */
    private void seal(Packet p) {
        int len = p.headerLength + p.payloadLength + Icrc.LENGTH;
        Icrc.write(p.buffer, len - Icrc.LENGTH, icrc.computeBthOnward(p.buffer, 0, len));
        p.hasIcrc = true;
        if (random.nextDouble() < faults.corrupt()) {
            corrupted.incrementAndGet();
            int at = random.nextInt(len);
            byte b = p.buffer.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at);
            p.buffer.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, (byte) (b ^ (1 << random.nextInt(8))));
        }
    }

    /** Sends the packets held longer than {@link #HOLD_NANOS}. */
    private final class Flusher implements Agent {
        @Override
        public String roleName() {
            return "faulty-link";
        }

        @Override
        public int doWork() {
            int sent = 0;
            for (;;) {
                Packet p;
                synchronized (FaultyLink.this) {
                    Long since = heldSince.peek();
                    if (since == null || clock.nanoTime() - since < HOLD_NANOS) {
                        return sent;
                    }
                    heldSince.poll();
                    p = held.poll();
                }
                sent++;
                try {
                    inner.send(p);
                } catch (Throwable t) {
                    // the receiving side failed; the link keeps working
                }
            }
        }

        /** Until the oldest held packet is due; with none held, until a packet is held. */
        long nanosToWait() {
            synchronized (FaultyLink.this) {
                Long since = heldSince.peek();
                return since == null ? Long.MAX_VALUE : since + HOLD_NANOS - clock.nanoTime();
            }
        }
    }

    public long lost() {
        return lost.get();
    }

    public long duplicated() {
        return duplicated.get();
    }

    public long reordered() {
        return reordered.get();
    }

    public long corrupted() {
        return corrupted.get();
    }

    @Override
    public long dropped() {
        return lost.get() + inner.dropped();
    }

    /**
     * The inner link's counters and the faults injected so far ({@code fault_lost},
     * {@code fault_duplicated}, {@code fault_reordered}, {@code fault_corrupted}), so a caller that
     * only holds the device (a device created from a spec) can report them.
     */
    @Override
    public java.util.Map<String, Long> counters() {
        java.util.Map<String, Long> m = new java.util.TreeMap<>(inner.counters());
        m.put("fault_lost", lost.get());
        m.put("fault_duplicated", duplicated.get());
        m.put("fault_reordered", reordered.get());
        m.put("fault_corrupted", corrupted.get());
        return m;
    }

    @Override
    public boolean receiveBacklogged() {
        return inner.receiveBacklogged();
    }

    /** Receives through the inner link (faults apply to what this link sends). */
    @Override
    public int poll() {
        return inner.poll();
    }

    @Override
    public void pollerBlocks() {
        inner.pollerBlocks();
    }

    @Override
    public int await(long timeoutNs) {
        return inner.await(timeoutNs);
    }

    @Override
    public void wakeAwait() {
        inner.wakeAwait();
    }

    @Override
    public void joinGroup(org.rdma4j.verbs.Gid group) throws java.io.IOException {
        inner.joinGroup(group);
    }

    @Override
    public void leaveGroup(org.rdma4j.verbs.Gid group) {
        inner.leaveGroup(group);
    }

    @Override
    public void close() {
        if (flusherRunner != null) {
            flusherRunner.close();
        }
        inner.close();
    }
}
