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

    /** Receives what has arrived, on the calling thread, and hands it to the sink; returns the number of
     *  packets handled. Never blocks. A link without a receive path of its own for the caller returns 0. */
    default int poll() { return 0; }

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
