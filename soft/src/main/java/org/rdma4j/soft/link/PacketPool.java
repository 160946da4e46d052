package org.rdma4j.soft.link;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A pool of reusable packets. Grows when every packet is in flight (allocation only above the high
 * water mark), never shrinks. Thread safe.
 */
public final class PacketPool {
    private Packet[] stack = new Packet[256];
    private int size;
    private final AtomicLong created = new AtomicLong();

    /** A clean packet. */
    public Packet acquire() {
        synchronized (this) {
            if (size > 0) {
                Packet p = stack[--size];
                stack[size] = null;
                p.markFree(false);
                return p;
            }
        }
        created.incrementAndGet();
        return new Packet(this);
    }

    void release(Packet p) {
        p.reset();
        synchronized (this) {
            if (p.markFree(true)) {
                throw new IllegalStateException("packet released twice");
            }
            if (size == stack.length) {
                stack = java.util.Arrays.copyOf(stack, size * 2);
            }
            stack[size++] = p;
        }
    }

    /** Packets ever allocated by this pool. */
    public long created() {
        return created.get();
    }
}
