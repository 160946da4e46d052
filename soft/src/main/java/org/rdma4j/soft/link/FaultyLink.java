package org.rdma4j.soft.link;

import java.util.ArrayDeque;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.soft.wire.Icrc;

/**
 * A link that misbehaves on purpose, reproducibly from a seed: it loses, duplicates, reorders and
 * corrupts packets. Every packet it passes is materialized and carries an ICRC, so the receiving
 * device catches corruption exactly as a RoCE NIC would (and counts it). Reordered packets are held
 * back and delivered after later ones, or by the link's own thread after at most
 * {@link #HOLD_NANOS}. Thread safe.
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
    private final Thread flusher;
    private volatile boolean closed;

    public FaultyLink(Link inner, Faults faults, long seed) {
        this.inner = inner;
        this.faults = faults;
        this.random = new SplittableRandom(seed);
        flusher = Thread.ofPlatform().daemon().name("rdma4j-faulty-link").start(this::flushLoop);
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
                heldSince.add(System.nanoTime());
            } else if (!held.isEmpty()) {
                release = held.poll();
                heldSince.poll();
            }
        }
        if (!hold) {
            inner.send(packet);
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

    private void flushLoop() {
        while (!closed) {
            LockSupport.parkNanos(HOLD_NANOS / 2);
            Packet p;
            for (;;) {
                synchronized (this) {
                    Long since = heldSince.peek();
                    if (since == null || System.nanoTime() - since < HOLD_NANOS) {
                        break;
                    }
                    heldSince.poll();
                    p = held.poll();
                }
                try {
                    inner.send(p);
                } catch (Throwable t) {
                    // the receiving side failed; the link keeps working
                }
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
        closed = true;
        inner.close();
    }
}
