// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.packet;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A pool of reusable packets. Each thread keeps a small cache of free packets, so the common case
 * (acquire and release on the engine's threads) touches no shared state. Packets move between the
 * caches and a shared stack in batches of {@link #BATCH}: a full cache spills half of itself, an empty
 * one refills half. Grows when every packet is in flight or parked in other threads' caches (allocation
 * only above the high water mark), never shrinks. Thread safe.
 *
 * <p>Why the cache is small: a packet is often acquired on one thread and released on another (a
 * requester on the poster's thread, the receiver's task on the peer's). Until the releasing thread's
 * cache spills, the acquiring thread finds nothing and allocates, so each thread can strand up to
 * {@link #CACHE} packets. With 64 that was about 75 KB of heap allocated at some unpredictable point of
 * a run (seen by perf's allocation test, 2026-11-24); with 16 it is at most about 18 KB.
 */
public final class PacketPool {
    /** Packets one thread keeps. */
    static final int CACHE = 16;
    /** Packets moved between a thread's cache and the shared stack at once. */
    static final int BATCH = CACHE / 2;

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
        if (c.size == 0 && !refill(c)) {
            created.incrementAndGet();
            return new Packet(this);
        }
        Packet p = c.packets[--c.size];
        c.packets[c.size] = null;
        p.markFree(false);
        return p;
    }

    /** Moves up to a batch from the shared stack into the empty cache; false when there was nothing. */
    private synchronized boolean refill(Cache c) {
        int n = Math.min(BATCH, sharedSize);
        for (int i = 0; i < n; i++) {
            Packet p = shared[--sharedSize];
            shared[sharedSize] = null;
            c.packets[c.size++] = p;
        }
        return n > 0;
    }

    void release(Packet p) {
        p.reset();
        if (p.markFree(true)) {
            throw new IllegalStateException("packet released twice");
        }
        Cache c = caches.get();
        if (c.size == CACHE) {
            spill(c);
        }
        c.packets[c.size++] = p;
    }

    /** Moves a batch from the full cache to the shared stack. */
    private synchronized void spill(Cache c) {
        if (sharedSize + BATCH > shared.length) {
            shared = java.util.Arrays.copyOf(shared, shared.length * 2);
        }
        for (int i = 0; i < BATCH; i++) {
            Packet p = c.packets[--c.size];
            c.packets[c.size] = null;
            shared[sharedSize++] = p;
        }
    }

    /** Packets ever allocated by this pool. */
    public long created() {
        return created.get();
    }
}
