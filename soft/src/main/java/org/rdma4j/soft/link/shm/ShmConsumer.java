// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import static org.rdma4j.soft.link.shm.ShmRing.ACTIVE;
import static org.rdma4j.soft.link.shm.ShmRing.BROKEN;
import static org.rdma4j.soft.link.shm.ShmRing.CLAIMED;
import static org.rdma4j.soft.link.shm.ShmRing.CLOSING;
import static org.rdma4j.soft.link.shm.ShmRing.FREE;
import static org.rdma4j.soft.link.shm.ShmRing.H_CLAIMED;
import static org.rdma4j.soft.link.shm.ShmRing.H_SLEEPING;
import static org.rdma4j.soft.link.shm.ShmRing.INT;
import static org.rdma4j.soft.link.shm.ShmRing.KIND_BURST;
import static org.rdma4j.soft.link.shm.ShmRing.KIND_PACKET;
import static org.rdma4j.soft.link.shm.ShmRing.KIND_SKIP;
import static org.rdma4j.soft.link.shm.ShmRing.LANE_HEADER_BYTES;
import static org.rdma4j.soft.link.shm.ShmRing.LONG;
import static org.rdma4j.soft.link.shm.ShmRing.L_GID;
import static org.rdma4j.soft.link.shm.ShmRing.L_HEAD;
import static org.rdma4j.soft.link.shm.ShmRing.L_PORT;
import static org.rdma4j.soft.link.shm.ShmRing.L_START;
import static org.rdma4j.soft.link.shm.ShmRing.L_STATE;
import static org.rdma4j.soft.link.shm.ShmRing.L_TAIL;
import static org.rdma4j.soft.link.shm.ShmRing.MAX_BURST_BYTES;
import static org.rdma4j.soft.link.shm.ShmRing.MAX_LANES;
import static org.rdma4j.soft.link.shm.ShmRing.SLOT_BYTES;
import static org.rdma4j.soft.link.shm.ShmRing.SLOT_HEADER_BYTES;
import static org.rdma4j.soft.link.shm.ShmRing.alive;
import static org.rdma4j.soft.link.shm.ShmRing.slotsFor;
import static org.rdma4j.soft.link.shm.ShmRing.stateWord;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.rdma4j.soft.packet.Packet;

/**
 * The owner's side of its {@link ShmRing}: every lane's consumer. Opens lanes newly claimed and frees
 * lanes their producer released (or that a dead process left: {@link #reapDeadProducers}), takes the
 * entries of each claimed lane and hands them to a {@link Handler} (a burst it still reads holds its
 * lane: {@link #releaseHold}), gives up on a lane whose indices or entries are impossible, and says
 * when it is about to sleep ({@link #prepareToSleep}). Its per-lane state is the owner's own memory,
 * read once from the mapping and checked. One thread at a time (the link's consumer slot), but
 * {@link #releaseHold} (any thread).
 */
final class ShmConsumer {
    /** What a consumer does with a packet: copy it out of {@code ring} (the bytes are the peer's to reuse after). */
    interface Handler {
        void onPacket(int lane, MemorySegment ring, long data, int length, int hopLimit, int trafficClass);

        /**
         * A burst entry ({@link Packet#burstPackets}): {@code length} bytes at {@code data}, the first
         * packet's headers and then the payload of {@code packets} packets segmented at {@code mtu}, the
         * last one's opcode {@code lastOpcode}; nothing of it checked yet but that it lies in the lane.
         * Returns true when the handler is done with the bytes; false when it still reads them (the
         * engine queued the packet that points into the ring): the lane's head then waits at this
         * entry, and nothing more is taken from the lane, until {@link ShmConsumer#releaseHold(int)}. By
         * default the burst is dropped.
         */
        default boolean onBurst(int lane, MemorySegment ring, long data, int length, int hopLimit, int trafficClass,
                                int packets, int mtu, int lastOpcode) {
            return true;
        }

        /** A lane became ACTIVE for a new producer (control path: the handler may allocate). */
        default void onLaneOpened(int lane, byte[] gid, int port) {}

        /** A lane's producer left (or died, or corrupted it): the lane is free again. */
        default void onLaneClosed(int lane) {}
    }

    private final ShmRing ring;
    private final MemorySegment map;
    private final int lanes;
    private final int slots;
    private final int mask;
    private long[] heads;
    private long[] laneTokens;
    private boolean[] laneOpen;
    /** Where the head moves when the lane's held burst is released; -1: none held. */
    private long[] holdEnd;
    /** Set (any thread) by {@link #releaseHold}; read and cleared by the consumer. */
    private final AtomicIntegerArray released = new AtomicIntegerArray(MAX_LANES);
    private long corruptions;

    ShmConsumer(ShmRing ring) {
        this.ring = ring;
        this.map = ring.map;
        this.lanes = ring.lanes();
        this.slots = ring.slots();
        this.mask = slots - 1;
    }

    private void consumerState() {
        if (heads == null) {
            heads = new long[lanes];
            laneTokens = new long[lanes];
            laneOpen = new boolean[lanes];
            holdEnd = new long[lanes];
            Arrays.fill(holdEnd, -1);
        }
    }

    /**
     * The handler is done with the burst it held in lane {@code lane} ({@link Handler#onBurst} returned
     * false): any thread. The consumer moves past it at its next look; wake it if it sleeps.
     */
    void releaseHold(int lane) {
        released.set(lane, 1);
    }

    /** Lanes or slots found corrupt (impossible index or length) and dropped. */
    long corruptions() {
        return corruptions;
    }

    /**
     * Takes up to {@code max} packets from every claimed lane and hands them to {@code h}; returns how
     * many. Also opens lanes newly claimed and frees lanes their producer released. One thread at a time.
     */
    int consume(Handler h, int max) {
        consumerState();
        long claimed = (long) LONG.getAcquire(map, H_CLAIMED);
        int n = 0;
        while (claimed != 0) {
            int i = Long.numberOfTrailingZeros(claimed);
            claimed &= claimed - 1;
            if (i >= lanes) {
                break; // bits past the lanes: corrupt, ignored
            }
            long b = ring.lane(i);
            long state = (long) LONG.getAcquire(map, b + L_STATE);
            if (!laneOpen[i] || state != laneTokens[i]) {
                if (!laneChanged(i, state, h)) {
                    continue;
                }
            }
            n += drainLane(i, b, h, max);
        }
        return n;
    }

    /** Control path for lane {@code i} whose state word is not the one we consume from; true if now open. */
    private boolean laneChanged(int i, long state, Handler h) {
        if (stillHeld(i)) {
            return false; // freed (and so reused) only once the engine is done with the held bytes
        }
        int st = (int) (state & 0xFF);
        long b = ring.lane(i);
        if (laneOpen[i]) {
            laneOpen[i] = false;
            h.onLaneClosed(i);
        }
        if (st == ACTIVE) {
            byte[] gid = new byte[16];
            MemorySegment.copy(map, ValueLayout.JAVA_BYTE, b + L_GID, gid, 0, 16);
            int port = map.get(ValueLayout.JAVA_INT, b + L_PORT);
            laneTokens[i] = state;
            heads[i] = (long) LONG.getAcquire(map, b + L_HEAD);
            laneOpen[i] = true;
            h.onLaneOpened(i, gid, port & 0xFFFF);
            return true;
        }
        if (st == CLOSING) {
            freeLane(i);
        }
        return false; // CLAIMED: its producer is still writing the identity
    }

    private void freeLane(int i) {
        long b = ring.lane(i);
        ring.setClaimedBit(i, false); // before FREE: a new claimant sets the bit after we cleared it
        map.set(ValueLayout.JAVA_LONG, b + L_TAIL, 0);
        map.set(ValueLayout.JAVA_LONG, b + L_HEAD, 0);
        LONG.setRelease(map, b + L_STATE, stateWord(0, FREE));
    }

    private int drainLane(int i, long b, Handler h, int max) {
        if (stillHeld(i)) {
            return 0; // the engine still reads the held burst's bytes
        }
        long head = heads[i];
        long tail = (long) LONG.getAcquire(map, b + L_TAIL);
        long avail = tail - head;
        if (avail == 0) {
            return 0;
        }
        if (avail < 0 || avail > slots) {
            corruptLane(i, h);
            return 0;
        }
        int n = 0;
        while (head != tail && n < max) {
            long slot = b + LANE_HEADER_BYTES + (head & mask) * (long) SLOT_BYTES;
            int length = map.get(ValueLayout.JAVA_INT, slot);
            int hop = map.get(ValueLayout.JAVA_BYTE, slot + 4) & 0xFF;
            int tclass = map.get(ValueLayout.JAVA_BYTE, slot + 5) & 0xFF;
            int kind = map.get(ValueLayout.JAVA_BYTE, slot + 6);
            n++;
            if (kind == KIND_PACKET) {
                head++;
                if (length <= 0 || length > SLOT_BYTES - SLOT_HEADER_BYTES) {
                    corruptions++;
                    continue;
                }
                h.onPacket(i, map, slot + SLOT_HEADER_BYTES, length, hop, tclass);
                continue;
            }
            int pos = (int) (head & mask);
            int taken = kind == KIND_SKIP ? slots - pos : kind == KIND_BURST ? entrySlots(length) : -1;
            if (taken <= 0 || taken > tail - head || pos + taken > slots
                    || (kind == KIND_SKIP && length != taken)) {
                heads[i] = head; // where the next entry starts is unknown: the lane is lost
                LONG.setRelease(map, b + L_HEAD, head);
                corruptLane(i, h);
                return n;
            }
            if (kind == KIND_SKIP) {
                head += taken;
                continue;
            }
            int packets = map.get(ValueLayout.JAVA_INT, slot + 8);
            int mtu = map.get(ValueLayout.JAVA_INT, slot + 12);
            int lastOp = map.get(ValueLayout.JAVA_BYTE, slot + 7) & 0xFF;
            if (!h.onBurst(i, map, slot + SLOT_HEADER_BYTES, length, hop, tclass, packets, mtu, lastOp)) {
                holdEnd[i] = head + taken; // the head stays at the burst until the handler releases it
                break;
            }
            head += taken;
        }
        heads[i] = head;
        LONG.setRelease(map, b + L_HEAD, head);
        return n;
    }

    /**
     * Whether lane {@code i} has a burst the handler still reads; once released, the head moves past
     * it (published to the producer) and this is false.
     */
    private boolean stillHeld(int i) {
        if (holdEnd[i] < 0) {
            return false;
        }
        if (released.get(i) == 0) {
            return true;
        }
        released.set(i, 0);
        heads[i] = holdEnd[i];
        holdEnd[i] = -1;
        LONG.setRelease(map, ring.lane(i) + L_HEAD, heads[i]);
        return false;
    }

    /** The slots of a burst entry of {@code length} bytes, or -1 if no burst is that long. */
    private static int entrySlots(int length) {
        return length <= 0 || length > MAX_BURST_BYTES ? -1 : slotsFor(length);
    }

    private void corruptLane(int i, Handler h) {
        corruptions++;
        laneOpen[i] = false;
        h.onLaneClosed(i);
        long b = ring.lane(i);
        ring.setClaimedBit(i, false);
        LONG.setRelease(map, b + L_STATE, stateWord(laneTokens[i] >>> 8, BROKEN));
    }

    /**
     * Frees lanes whose producer process is gone (control path: it looks processes up; call it now and
     * then, e.g. when idle). Returns how many it freed.
     */
    int reapDeadProducers(Handler h) {
        consumerState();
        int freed = 0;
        for (int i = 0; i < lanes; i++) {
            long b = ring.lane(i);
            long state = (long) LONG.getAcquire(map, b + L_STATE);
            int st = (int) (state & 0xFF);
            if (st == FREE || stillHeld(i)) {
                continue;
            }
            long pid = state >>> 8;
            long start = map.get(ValueLayout.JAVA_LONG, b + L_START);
            if (st == CLOSING || !alive(pid, st == CLAIMED ? 0 : start)) {
                if ((long) LONG.getAcquire(map, b + L_STATE) != state) {
                    continue; // it moved on meanwhile: look again next time
                }
                if (laneOpen[i]) {
                    laneOpen[i] = false;
                    h.onLaneClosed(i);
                }
                freeLane(i);
                freed++;
            }
        }
        return freed;
    }

    /**
     * Says the consumer is about to wait and looks at every lane once more; true if something is
     * there (then it does not sleep, and clears the flag).
     */
    boolean prepareToSleep() {
        INT.setVolatile(map, H_SLEEPING, 1);
        VarHandle.fullFence();
        if (hasWork()) {
            INT.setVolatile(map, H_SLEEPING, 0);
            return false;
        }
        return true;
    }

    /** Whether a claimed lane holds a packet or changed state. */
    boolean hasWork() {
        consumerState();
        long claimed = (long) LONG.getAcquire(map, H_CLAIMED);
        while (claimed != 0) {
            int i = Long.numberOfTrailingZeros(claimed);
            claimed &= claimed - 1;
            if (i >= lanes) {
                break;
            }
            if (holdEnd[i] >= 0) {
                if (released.get(i) != 0) {
                    return true;
                }
                continue; // nothing to do there until the holder releases it (and wakes us)
            }
            long b = ring.lane(i);
            if (!laneOpen[i] || (long) LONG.getAcquire(map, b + L_STATE) != laneTokens[i]
                    || (long) LONG.getAcquire(map, b + L_TAIL) != heads[i]) {
                return true;
            }
        }
        return false;
    }
}
