// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link;

import org.rdma4j.soft.packet.Packet;

/** Where a link delivers packets: a device's receive path. It takes ownership of the packet. */
public interface PacketSink {
    void receive(Packet packet);

    /**
     * Like {@link #receive}, from a link that reads packets in batches: the sink may queue the
     * packet and do the work at {@link #endBatch()}, so a burst is handled per queue pair rather than
     * per packet (one acknowledgement for many packets, say). Only one thread per sink calls this.
     */
    default void receiveInBatch(Packet packet) {
        receive(packet);
    }

    /** The end of a batch started by {@link #receiveInBatch}: finish the queued work. */
    default void endBatch() {}
}
