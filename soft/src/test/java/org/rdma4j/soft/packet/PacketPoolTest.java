// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.packet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The pool's high-water mark: what it allocates is bounded by what is in flight plus the caches. */
class PacketPoolTest {

    @Test
    void oneThreadReusesWhatItReleases() {
        PacketPool pool = new PacketPool();
        Packet[] held = new Packet[3];
        for (int round = 0; round < 10_000; round++) {
            for (int i = 0; i < held.length; i++) {
                held[i] = pool.acquire();
            }
            for (Packet p : held) {
                p.release();
            }
        }
        assertEquals(3, pool.created());
    }

    /**
     * A requester acquiring on one thread while the peer's task releases on another: the acquiring
     * thread finds packets again once the releasing thread's cache spills, so the pool stops growing at
     * the packets in flight plus one cache and one batch, however long the run.
     */
    @Test
    void acquireOnOneThreadReleaseOnAnotherStopsGrowing() throws Exception {
        PacketPool pool = new PacketPool();
        int inFlight = 4;
        ArrayBlockingQueue<Packet> wire = new ArrayBlockingQueue<>(inFlight);
        int total = 200_000;
        Thread releaser = Thread.ofPlatform().name("releaser").start(() -> {
            try {
                for (int i = 0; i < total; i++) {
                    Packet p = wire.poll(10, TimeUnit.SECONDS);
                    if (p == null) {
                        return;
                    }
                    p.release();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long createdAtHalf = -1;
        for (int i = 0; i < total; i++) {
            assertTrue(wire.offer(pool.acquire(), 10, TimeUnit.SECONDS), "the releaser stopped");
            if (i == total / 2) {
                createdAtHalf = pool.created();
            }
        }
        releaser.join(10_000);
        long bound = inFlight + 1 + PacketPool.CACHE + PacketPool.BATCH;
        assertTrue(pool.created() <= bound, pool.created() + " packets created, bound " + bound);
        assertEquals(createdAtHalf, pool.created(), "the pool grew in the second half of the run");
    }

    @Test
    void releasingTwiceIsRefused() {
        PacketPool pool = new PacketPool();
        Packet p = pool.acquire();
        p.release();
        assertThrows(IllegalStateException.class, p::release);
    }
}
