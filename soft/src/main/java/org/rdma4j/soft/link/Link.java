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

    /** Link-level counters (name to value) that a device shows next to its own; none by default. */
    default java.util.Map<String, Long> counters() {
        return java.util.Map.of();
    }

    @Override
    default void close() {}
}
