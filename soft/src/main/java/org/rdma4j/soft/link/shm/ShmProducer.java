// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import static org.rdma4j.soft.link.shm.ShmRing.ACTIVE;
import static org.rdma4j.soft.link.shm.ShmRing.BROKEN;
import static org.rdma4j.soft.link.shm.ShmRing.CLOSING;
import static org.rdma4j.soft.link.shm.ShmRing.FREE;
import static org.rdma4j.soft.link.shm.ShmRing.KIND_BURST;
import static org.rdma4j.soft.link.shm.ShmRing.KIND_PACKET;
import static org.rdma4j.soft.link.shm.ShmRing.KIND_SKIP;
import static org.rdma4j.soft.link.shm.ShmRing.LANE_HEADER_BYTES;
import static org.rdma4j.soft.link.shm.ShmRing.LONG;
import static org.rdma4j.soft.link.shm.ShmRing.L_HEAD;
import static org.rdma4j.soft.link.shm.ShmRing.L_STATE;
import static org.rdma4j.soft.link.shm.ShmRing.L_TAIL;
import static org.rdma4j.soft.link.shm.ShmRing.SLOT_BYTES;
import static org.rdma4j.soft.link.shm.ShmRing.SLOT_HEADER_BYTES;
import static org.rdma4j.soft.link.shm.ShmRing.slotsFor;
import static org.rdma4j.soft.link.shm.ShmRing.stateWord;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The producer's side of one lane of a peer's {@link ShmRing}, claimed with {@link ShmRing#claim}: where
 * the next entry goes (a slot, or a run of slots for a burst, after a skip entry at the ring's end),
 * publishing it (its slot header, then the tail with release semantics) and handing the lane back. It
 * reads the consumer's head only when the last one it saw leaves too little room, and treats an
 * impossible head, or a lane the consumer gave up on, as a corrupt peer. Not thread safe (its user
 * holds a lock).
 */
final class ShmProducer {
    private final ShmRing ring;
    private final MemorySegment map;
    private final int slots;
    private final int mask;
    final int lane;
    private final long base;
    private final long token;
    private long tail;
    /** The consumer's head as last read: the free space is known without reading it every time. */
    private long headSeen;
    private boolean corrupt;

    ShmProducer(ShmRing ring, int lane, long token) {
        this.ring = ring;
        this.map = ring.map;
        this.slots = ring.slots();
        this.mask = slots - 1;
        this.lane = lane;
        this.base = ring.lane(lane);
        this.token = token;
    }

    /**
     * Where the next packet's bytes go ({@link #slotData} of a free slot), or -1 if the lane is full,
     * or -2 if the consumer's head is impossible (a corrupt peer: stop using the lane).
     */
    long claimSlot() {
        int r = room(1);
        return r < 0 ? r : tailSlot() + SLOT_HEADER_BYTES;
    }

    /** The slot at the tail (its header). */
    private long tailSlot() {
        return base + LANE_HEADER_BYTES + (tail & mask) * (long) SLOT_BYTES;
    }

    /**
     * Whether {@code needed} more slots fit after the tail: 0; -1 if not yet (the consumer has not
     * taken enough); -2 if the consumer's head is impossible or it gave up on the lane (a corrupt
     * peer: stop using the lane). Reads the head only when the last one seen leaves too little room.
     */
    private int room(long needed) {
        if (corrupt) {
            return -2;
        }
        if (tail + needed - headSeen <= slots) {
            return 0;
        }
        long h = (long) LONG.getAcquire(map, base + L_HEAD);
        if (h > tail || tail - h > slots) {
            corrupt = true;
            return -2;
        }
        headSeen = h;
        if (tail + needed - h <= slots) {
            return 0;
        }
        if ((long) LONG.getAcquire(map, base + L_STATE) != stateWord(token, ACTIVE)) {
            corrupt = true; // the consumer gave up on the lane
            return -2;
        }
        return -1;
    }

    /**
     * Where an entry of {@code bytes} (at most {@link ShmRing#MAX_BURST_BYTES}) goes:
     * the data of the first of {@link ShmRing#slotsFor} free consecutive slots, or -1 if the lane has no
     * room for them yet, or -2 as {@link #claimSlot()}. When the run would pass the ring's end, a
     * skip entry fills the slots up to it first (once there is room for both) and the run starts at
     * slot 0.
     */
    long claimEntry(int bytes) {
        if (corrupt) {
            return -2;
        }
        int n = slotsFor(bytes);
        int pos = (int) (tail & mask);
        int skip = pos + n > slots ? slots - pos : 0;
        if (n > slots / 2) {
            throw new IllegalArgumentException(bytes + " bytes do not fit a lane of " + slots + " slots");
        }
        int r = room(skip + n);
        if (r < 0) {
            return r;
        }
        if (skip > 0) {
            long at = base + LANE_HEADER_BYTES + (long) pos * SLOT_BYTES;
            writeHeader(at, skip, 0, 0, KIND_SKIP, 0, 0, 0);
            tail += skip;
            LONG.setRelease(map, base + L_TAIL, tail);
        }
        return tailSlot() + SLOT_HEADER_BYTES;
    }

    /** Publishes the slot {@link #claimSlot()} gave: {@code length} bytes from the BTH on. */
    void publish(int length, int hopLimit, int trafficClass) {
        long slot = tailSlot();
        writeHeader(slot, length, hopLimit, trafficClass, KIND_PACKET, 0, 0, 0);
        LONG.setRelease(map, base + L_TAIL, ++tail);
    }

    /**
     * Publishes the entry {@link #claimEntry} gave as a burst of {@code packets} packets segmented at
     * {@code mtu}, the last one's opcode {@code lastOpcode}: {@code length} bytes (headers and payload).
     */
    void publishBurst(int length, int hopLimit, int trafficClass, int packets, int mtu, int lastOpcode) {
        long slot = tailSlot();
        writeHeader(slot, length, hopLimit, trafficClass, KIND_BURST, lastOpcode, packets, mtu);
        tail += slotsFor(length);
        LONG.setRelease(map, base + L_TAIL, tail);
    }

    private void writeHeader(long slot, int length, int hopLimit, int trafficClass, int kind, int lastOpcode,
                             int packets, int mtu) {
        map.set(ValueLayout.JAVA_INT, slot, length);
        map.set(ValueLayout.JAVA_BYTE, slot + 4, (byte) hopLimit);
        map.set(ValueLayout.JAVA_BYTE, slot + 5, (byte) trafficClass);
        map.set(ValueLayout.JAVA_BYTE, slot + 6, (byte) kind);
        map.set(ValueLayout.JAVA_BYTE, slot + 7, (byte) lastOpcode);
        map.set(ValueLayout.JAVA_INT, slot + 8, packets);
        map.set(ValueLayout.JAVA_INT, slot + 12, mtu);
    }

    /** Published packets the consumer has not taken yet (as far as this producer knows). */
    long backlog() {
        return tail - (long) LONG.getAcquire(map, base + L_HEAD);
    }

    /** Hands the lane back: the consumer frees it. */
    void release() {
        if (!ring.closed() && !LONG.compareAndSet(map, base + L_STATE, stateWord(token, ACTIVE),
                stateWord(token, CLOSING))) {
            LONG.compareAndSet(map, base + L_STATE, stateWord(token, BROKEN), stateWord(0, FREE));
        }
    }
}
