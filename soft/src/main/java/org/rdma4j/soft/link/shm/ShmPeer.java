// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.rdma4j.soft.link.LinkLog;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.link.udp.RoceFramer;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Icrc;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.Gid;

/**
 * A destination device of a {@link ShmLink}: its ring file mapped with a claimed lane ({@link
 * ShmProducer}), or why not and when to look again; the backlog of packets that found its lane
 * full; the framing of packets and bursts into ring entries ({@link RoceFramer}) and waking its
 * receiver (futex or doorbell datagram). Guarded by its own monitor, which the link holds around each
 * call (its {@link #bursts} is read without: a hint).
 */
final class ShmPeer {
    /** Why a packet did not go into a ring. */
    static final int SENT = 0;
    static final int NO_RING = 1;
    static final int DROPPED = 2;
    /** The lane stayed full (for the wait the sender may make). */
    static final int FULL = 3;
    /** In the peer's backlog. */
    static final int QUEUED = 4;
    private static final System.Logger LOG = System.getLogger(LinkLog.CATEGORY);

    private final ShmLink link;
    final Gid gid;
    final byte[] dstBytes;
    final Path file;
    /** Null: unknown yet; false: its address is not this host's. */
    private Boolean local;
    private ShmRing ring;
    private ShmProducer producer;
    private InetSocketAddress bellAddress;
    /** The receiver checks ICRCs: compute them. */
    private boolean icrc;
    /** The receiver sleeps on its futex word: wake it there (else with a doorbell datagram). */
    private boolean futex;
    /** Connected to a ring that takes bursts (read without the lock by {@link ShmLink#burstLimit}: a hint). */
    boolean bursts;
    /** The ring is there and trusted but every lane is taken: UDP under either policy (counted, warned). */
    boolean noLane;
    private boolean warned;
    final ShmBacklog backlog = new ShmBacklog();
    private long retryAtNs = System.nanoTime();
    private final RoceFramer framer;
    private final ByteBuffer bell = ByteBuffer.allocateDirect(1);

    ShmPeer(ShmLink link, Gid gid) {
        this.link = link;
        this.gid = gid;
        this.framer = new RoceFramer(link.v6, link.localBytes, link.port);
        byte[] raw = gid.bytes();
        this.dstBytes = link.v6 ? raw : java.util.Arrays.copyOfRange(raw, 12, 16);
        this.file = ShmLink.fileFor(link.dir, gid, link.remotePort);
    }

    /**
     * Sends {@code p} behind what the backlog holds, waiting up to {@link #FULL_WAIT_NS} for room
     * (not at all on the consumer's thread): SENT, QUEUED (the backlog owns it), NO_RING or DROPPED.
     */
    int offer(Packet p) {
        int r = ready(p.burstPackets > 1);
        if (r != SENT) {
            return r;
        }
        long wait = link.consumer.get() == Thread.currentThread() ? 0 : ShmLink.FULL_WAIT_NS;
        r = backlog.isEmpty() || flush(wait) ? write(p, wait) : FULL;
        if (r != FULL) {
            return r;
        }
        if (backlog.add(p)) {
            link.backlogQueued.incrementAndGet();
            link.backlogged = true;
            return QUEUED;
        }
        link.fullDrops.incrementAndGet(); // as a full socket buffer drops: the transport retransmits
        return DROPPED;
    }

    /** Writes the backlog into the lane while there is room (waiting up to {@code wait} ns a packet); true once it is empty. */
    boolean flush(long wait) {
        for (Packet q; (q = backlog.peek()) != null; ) {
            int r;
            try {
                r = write(q, wait);
            } catch (IllegalStateException e) {
                link.sendErrors.incrementAndGet(); // the memory it carries was freed meanwhile
                r = DROPPED;
            }
            if (r == FULL) {
                return false;
            }
            backlog.poll();
            q.release();
            if (producer == null) {
                link.fullDrops.addAndGet(backlog.clear() + 1L); // the lane is lost: the transport retransmits
                return true;
            }
            if (r == NO_RING) {
                link.burstDrops.incrementAndGet(); // a burst the ring takes no more
            }
        }
        return true;
    }

    /** One packet or burst into the lane: SENT, FULL, NO_RING (no lane, or a burst it cannot take) or DROPPED. */
    private int write(Packet p, long wait) {
        if (producer == null) {
            return NO_RING;
        }
        return p.burstPackets > 1 ? sendBurst(p, wait) : send(p, wait);
    }

    private int send(Packet p, long wait) {
        int bthLength = bthOnwardLength(p);
        if (bthLength < 0) {
            return DROPPED;
        }
        long slot = claim(-1, wait);
        if (slot < 0) {
            return (int) -slot;
        }
        MemorySegment map = ring.map;
        RoceFramer.copyBthOnward(p, map, slot, bthLength);
        int ttl = RoceFramer.hopLimitOf(p);
        int tos = p.trafficClass & 0xFF;
        if (icrc) {
            framer.frame(framer.pseudo, dstBytes, link.remotePort, tos, ttl, 0, map, slot, bthLength);
        } else {
            map.set(ValueLayout.JAVA_INT_UNALIGNED, slot + bthLength - Icrc.LENGTH, 0);
        }
        producer.publish(bthLength, ttl, tos);
        link.shmSent.incrementAndGet();
        if (Opcode.isResponse(Bth.opcodeOf(p.buffer)) && ring.polledWithin(System.nanoTime(), ShmLink.POLLING_NS)) {
            link.unwoken.incrementAndGet(); // the requester's poller takes it; its agent stands by
        } else if (ring.takeSleeper()) {
            wake();
        }
        return SENT;
    }

    /**
     * A burst ({@link Packet#burstPackets} &gt; 1) into one entry: the first packet's headers and the
     * whole payload, copied once from the sender's memory; no pad, no ICRC (the receiver checks
     * the burst as the packets it stands for).
     */
    private int sendBurst(Packet p, long wait) {
        int hl = p.headerLength;
        int len = p.payloadLength;
        if (hl + len > ShmRing.MAX_BURST_BYTES || !bursts) {
            return NO_RING; // a new owner that takes no bursts, too: dropped, the transport resends
        }
        long at = claim(hl + len, wait);
        if (at < 0) {
            return (int) -at;
        }
        MemorySegment map = ring.map;
        MemorySegment.copy(p.buffer, 0, map, at, hl);
        p.copyPayload(0, map, at + hl, len);
        int ttl = RoceFramer.hopLimitOf(p);
        producer.publishBurst(hl + len, ttl, p.trafficClass & 0xFF, p.burstPackets, p.burstMtu,
                p.burstLastOpcode);
        link.shmSent.addAndGet(p.burstPackets);
        link.burstsSent.incrementAndGet();
        if (ring.takeSleeper()) {
            wake();
        }
        return SENT;
    }

    /** Maps the ring and claims a lane if not yet done: SENT (ready) or NO_RING; for a burst, NO_RING also when the ring takes none. */
    private int ready(boolean burst) {
        if (producer == null && !connect()) {
            return NO_RING;
        }
        if (ring.ownerClosed()) {
            disconnect();
            return NO_RING;
        }
        return burst && !bursts ? NO_RING : SENT;
    }

    /**
     * Room for one slot ({@code bytes} &lt; 0) or an entry of {@code bytes}, waiting a bounded time
     * when the lane is full: where it goes, or -NO_RING (the lane is lost: counted, disconnected) or
     * -DROPPED (still full: counted).
     */
    private long claim(int bytes, long wait) {
        long at = bytes < 0 ? producer.claimSlot() : producer.claimEntry(bytes);
        if (at == -1 && wait > 0) {
            at = waitForRoom(bytes, wait);
        }
        if (at == -2) {
            link.laneDrops.incrementAndGet();
            disconnect();
            return -NO_RING;
        }
        if (at < 0) {
            return -FULL;
        }
        return at;
    }

    /**
     * Waits a bounded time for the consumer to make room for one slot ({@code bytes} &lt; 0) or an
     * entry of {@code bytes}; where it goes, or -1 (still full) or -2.
     */
    private long waitForRoom(int bytes, long limit) {
        long start = System.nanoTime();
        int spins = 0;
        long slot;
        while ((slot = bytes < 0 ? producer.claimSlot() : producer.claimEntry(bytes)) == -1) {
            if (System.nanoTime() - start > limit) {
                if (!ShmRing.alive(ring.ownerPid(), ring.ownerStartMs())) {
                    return -2; // the receiving process is gone: stop using its ring
                }
                return -1;
            }
            if (ring.takeSleeper()) {
                wake(); // it slept with a full lane? wake it anyway
            }
            if ((++spins & 63) == 0) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        }
        return slot;
    }

    private void wake() {
        if (futex) {
            ring.wakeSleeper();
            link.doorbells.incrementAndGet();
        } else {
            ringBell();
        }
    }

    private void ringBell() {
        try {
            bell.clear();
            link.doorbellSender().send(bell, bellAddress);
            link.doorbells.incrementAndGet();
        } catch (IOException e) {
            // the receiver wakes by itself within SLEEP_MS
        }
    }

    /** Control path: maps the destination's ring file and claims a lane, if it is local and there. */
    private boolean connect() {
        long now = System.nanoTime();
        if (link.closed || now - retryAtNs < 0) {
            return false;
        }
        retryAtNs = now + ShmLink.RETRY_NS;
        if (local == null) {
            local = ShmLink.isLocalAddress(gid);
        }
        if (!local || !Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        ShmRing r;
        try {
            r = ShmRing.open(file, link.files, gid.bytes(), link.remotePort);
        } catch (ShmRingFiles.Untrusted e) {
            link.untrustedRings.incrementAndGet(); // a squatter's file (or a mistake): never mapped, never silent
            warnOnce(e.getMessage() + (link.policy == ShmLink.Policy.SHM ? "; packets to it are dropped" : "; UDP instead"));
            return false;
        } catch (IOException | RuntimeException e) {
            return false;
        }
        ShmProducer pr = r.claim(link.self);
        noLane = pr == null;
        if (noLane) {
            link.noLaneFallbacks.incrementAndGet(); // every lane taken: UDP for now, a lane may free later
            warnOnce(file + " has no free lane (" + r.lanes() + " sending devices at most): UDP instead");
            r.close();
            return false;
        }
        ring = r;
        producer = pr;
        bursts = (r.flags() & ShmRing.FLAG_BURSTS) != 0
                && r.slots() >= 2 * ShmRing.slotsFor(ShmRing.MAX_BURST_BYTES);
        icrc = (r.flags() & ShmRing.FLAG_ICRC) != 0;
        futex = (r.flags() & ShmRing.FLAG_FUTEX) != 0 && Futex.isAvailable();
        bellAddress = new InetSocketAddress(InetAddress.getLoopbackAddress(), r.doorbellPort());
        return true;
    }

    private void warnOnce(String why) {
        if (!warned) {
            warned = true;
            LOG.log(System.Logger.Level.WARNING, "shared memory to " + gid + ": " + why);
        }
    }

    void disconnect() {
        bursts = false;
        if (producer != null) {
            producer.release();
            producer = null;
        }
        if (ring != null) {
            ring.close();
            ring = null;
        }
        retryAtNs = System.nanoTime() + ShmLink.RETRY_NS;
    }

    private int bthOnwardLength(Packet p) {
        int bthLength = framer.bthOnwardLength(p);
        if (bthLength == RoceFramer.BAD_ICRC) {
            link.datagrams.badIcrc.incrementAndGet();
        } else if (bthLength == RoceFramer.TOO_LONG) {
            link.fullDrops.incrementAndGet();
        }
        return bthLength;
    }
}
