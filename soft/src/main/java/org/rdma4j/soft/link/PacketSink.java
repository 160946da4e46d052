package org.rdma4j.soft.link;

/** Where a link delivers packets: a device's receive path. It takes ownership of the packet. */
public interface PacketSink {
    void receive(Packet packet);
}
