package org.rdma4j.soft.link;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A pool of reusable packets. Each thread keeps a small cache of free packets, so the common case
 * (acquire and release on the engine's threads) touches no shared state; caches spill into and refill
 * from a shared stack. Grows when every packet is in flight (allocation only above the high water mark),
 * never shrinks. Thread safe.
 */
public final class PacketPool {
    private static final int CACHE = 64;

    /** One thread's free packets. */
    private static final class Cache {
        final Packet[] packets = new Packet[CACHE];
        int size;
    }

    private final ThreadLocal<Cache> caches = ThreadLocal.withInitial(Cache::new);
    private Packet[] shared = new Packet[256];
    private int sharedSize;
    private final AtomicLong created = new AtomicLong();

    /** A clean packet. */
    public Packet acquire() {
        Cache c = caches.get();
        Packet p;
        if (c.size > 0) {
            p = c.packets[--c.size];
            c.packets[c.size] = null;
        } else {
            p = takeShared();
            if (p == null) {
                created.incrementAndGet();
                return new Packet(this);
            }
        }
        p.markFree(false);
        return p;
    }

    private synchronized Packet takeShared() {
        if (sharedSize == 0) {
            return null;
        }
        Packet p = shared[--sharedSize];
        shared[sharedSize] = null;
        return p;
    }

    void release(Packet p) {
        p.reset();
        if (p.markFree(true)) {
            throw new IllegalStateException("packet released twice");
        }
        Cache c = caches.get();
        if (c.size < CACHE) {
            c.packets[c.size++] = p;
            return;
        }
        synchronized (this) {
            if (sharedSize == shared.length) {
                shared = java.util.Arrays.copyOf(shared, sharedSize * 2);
            }
            shared[sharedSize++] = p;
        }
    }

    /** Packets ever allocated by this pool. */
    public long created() {
        return created.get();
    }
}
