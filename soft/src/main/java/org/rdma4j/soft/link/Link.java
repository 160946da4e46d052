package org.rdma4j.soft.link;

/**
 * How packets leave a device. {@link #send} takes ownership of the packet (the link releases it, or
 * hands it to the receiving sink, which does). Thread safe.
 */
public interface Link extends AutoCloseable {
    void send(Packet packet);

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

    /** Link-level counters (name to value) that a device shows next to its own; none by default. */
    default java.util.Map<String, Long> counters() {
        return java.util.Map.of();
    }

    @Override
    default void close() {}
}
