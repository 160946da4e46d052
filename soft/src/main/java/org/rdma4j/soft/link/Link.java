// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link;

import org.rdma4j.soft.packet.Packet;

/**
 * How packets leave a device. {@link #send} takes ownership of the packet (the link releases it, or
 * hands it to the receiving sink, which does). Thread safe.
 */
public interface Link extends AutoCloseable {
    void send(Packet packet);

    /**
     * Whether {@link #send(Packet[], int)} sends several packets in fewer calls than one each, so a
     * sender that makes several packets at once should collect them and hand them over together.
     */
    default boolean sendsInBatches() {
        return false;
    }

    /**
     * Sends {@code packets[0..count)} in order, as many {@link #send(Packet)} calls would (the same
     * packets leave, the same way); takes ownership of every one and clears its slot. Returns how many
     * were lost because the memory they carry was freed before the link copied it ({@link #send(Packet)}
     * throws IllegalStateException for such a packet).
     */
    default int send(Packet[] packets, int count) {
        int freed = 0;
        for (int i = 0; i < count; i++) {
            Packet p = packets[i];
            packets[i] = null;
            try {
                send(p);
            } catch (IllegalStateException e) {
                freed++;
            }
        }
        return freed;
    }

    /**
     * How many packets of one RC WRITE, segmented at {@code mtu}, this link carries to {@code dst} as one
     * burst ({@link Packet#burstPackets}) now; 1 (the default): none, every packet goes on its own. A
     * hint read on the data path: a link that then cannot carry a burst it was handed drops it (the
     * transport retransmits, asking again).
     */
    default int burstLimit(org.rdma4j.verbs.Gid dst, int mtu) {
        return 1;
    }

    /** Packets this link dropped (no route, queue full, fault injection). */
    default long dropped() {
        return 0;
    }

    /**
     * True while received packets are waiting that the device has not been handed yet (the link's
     * receive thread is behind): an acknowledgement may already be here. False by default.
     */
    default boolean receiveBacklogged() {
        return false;
    }

    /**
     * Receives what has already arrived and waits to be taken in, on the calling thread (a timer is
     * about to judge an acknowledgement missing): what the receive causes to be sent (ACKs) goes out at
     * once. Returns the packets handled, or -1 if another thread is receiving right now. Never blocks;
     * unlike {@link #poll()} it does not mark the caller as a poller of the link. 0 by default.
     */
    default int receiveArrived() {
        return 0;
    }

    /** Receives what has arrived, on the calling thread, and hands it to the sink; returns the number of
     *  packets handled. Never blocks. A link without a receive path of its own for the caller returns 0. */
    default int poll() { return 0; }

    /**
     * The thread that has been calling {@link #poll()} is about to block elsewhere (on a completion
     * channel) and stops polling: a link whose receive agent stands by while threads poll lets it
     * receive again now rather than after its stand-by period. Nothing by default.
     */
    default void pollerBlocks() {}

    /**
     * Waits on the calling thread, up to {@code timeoutNs}, for packets, and hands what arrives to the
     * sink (as {@link #poll()} does, but blocking): a thread about to wait for a completion event
     * receives itself instead of being woken by the link's receive thread. Returns the packets handled
     * (0: none came in time, or {@link #wakeAwait()} ended the wait), or -1 when this link cannot
     * receive on the caller's thread now (another thread is receiving, or it has no such path): the
     * caller then waits its own way. By default -1.
     */
    default int await(long timeoutNs) { return -1; }

    /** Ends an {@link #await} in progress on another thread soon (an event came another way). */
    default void wakeAwait() {}

    /** Link-level counters (name to value) that a device shows next to its own; none by default. */
    default java.util.Map<String, Long> counters() {
        return java.util.Map.of();
    }

    /**
     * Starts receiving packets sent to multicast {@code group} (the device has a QP attached to it).
     * Throws when the link cannot: by default it cannot.
     */
    default void joinGroup(org.rdma4j.verbs.Gid group) throws java.io.IOException {
        throw new java.io.IOException("this link does not carry multicast");
    }

    /** Stops receiving for {@code group} (its last QP on the device detached). */
    default void leaveGroup(org.rdma4j.verbs.Gid group) {}

    @Override
    default void close() {}
}
