// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import org.rdma4j.soft.packet.Packet;

/**
 * The packets a shared-memory sender could not put into a peer's full lane yet, in order: they go
 * into the lane before anything sent after them, as soon as there is room (the next send to that peer,
 * or the link's receive agent, which looks while any backlog is not empty). A full lane is waited out
 * rather than dropped, as rxe's requester retries a packet the full socket buffer refused: dropping a
 * burst and leaving it to retransmission collapses under loss (each timeout resends a whole window into
 * the still full lane). Bounded ({@link #CAPACITY}), like a socket buffer: a packet past it is dropped
 * (counted). Allocation-free after construction. Not thread safe (used under its peer's lock).
 */
final class ShmBacklog {
    /** Packets held per peer at most (about as many bytes as a UDP socket buffer holds at MTU 4096). */
    static final int CAPACITY = 2048;

    private final Packet[] packets;
    private int head;
    private int size;

    ShmBacklog() {
        this(CAPACITY);
    }

    ShmBacklog(int capacity) {
        packets = new Packet[capacity];
    }

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    /** Appends {@code p} (the backlog owns it now); false when full (the caller still owns it). */
    boolean add(Packet p) {
        if (size == packets.length) {
            return false;
        }
        packets[(head + size) % packets.length] = p;
        size++;
        return true;
    }

    /** The oldest packet, or null. */
    Packet peek() {
        return size == 0 ? null : packets[head];
    }

    /** Removes the oldest packet (the caller owns it now). */
    Packet poll() {
        if (size == 0) {
            return null;
        }
        Packet p = packets[head];
        packets[head] = null;
        head = (head + 1) % packets.length;
        size--;
        return p;
    }

    /** Releases every held packet; how many. */
    int clear() {
        int n = size;
        for (Packet p; (p = poll()) != null; ) {
            p.release();
        }
        return n;
    }
}
