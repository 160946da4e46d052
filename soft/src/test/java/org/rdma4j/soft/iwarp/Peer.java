// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * One end of a connection for the tests: a {@link FakeDevice}, a sender and a receiver sharing a
 * {@link ReadLedger}, and the smallest engine that drives them: it starts queued messages when the
 * sender is idle, answers inbound Read Requests first (as siw serves its IRQ), and queues the receiver's
 * Terminate when it stops.
 */
final class Peer {
    final FakeDevice device = new FakeDevice();
    final ReadLedger reads;
    final RdmapSender sender;
    final RdmapReceiver receiver;
    final Outbox outbox = new Outbox();
    private final StagResolver.Window window = new StagResolver.Window();

    /** Messages waiting for the sender, in order; a Read waits while ORD requests are in flight. */
    static final class Outbox {
        final ArrayDeque<Predicate<RdmapSender>> queue = new ArrayDeque<>();

        void add(Consumer<RdmapSender> start) {
            queue.add(s -> {
                start.accept(s);
                return true;
            });
        }

        void addRead(int sinkStag, long sinkOffset, int size, int sourceStag, long sourceOffset, long token) {
            queue.add(s -> s.readRequest(sinkStag, sinkOffset, size, sourceStag, sourceOffset, token) > 0);
        }
    }

    Peer(boolean crc, int mss, int ird, int ord) {
        reads = new ReadLedger(ird, ord);
        sender = new RdmapSender(crc, mss, reads);
        receiver = new RdmapReceiver(crc, 65535, reads, device, device);
    }

    /** Starts whatever can start now; true when the sender has something to write. */
    boolean startWork() {
        TerminateCause t = receiver.terminateToSend();
        if (t != null) {
            sender.terminate(t);
        }
        while (sender.idle() && !sender.pending() && !sender.terminated()) {
            RdmapReceiver.ReadRequest rr = device.readRequests.poll();
            if (rr != null) {
                sender.answer(rr, device, window);
            } else if (!outbox.queue.isEmpty() && outbox.queue.peek().test(sender)) {
                outbox.queue.poll();
            } else {
                break;
            }
        }
        return sender.pending();
    }

    /** Writes up to {@code room} bytes of this side's stream into {@code out} at 0; returns the count. */
    int produce(MemorySegment out, int room) {
        int at = 0;
        while (at < room && startWork()) {
            long n = sender.fill(out, at, room - at);
            if (n == 0) {
                break;
            }
            at += (int) n;
        }
        return at;
    }

    /**
     * Moves bytes both ways until neither side has anything to write, with random window and chunk
     * sizes; returns false if it had to give up (more rounds than the bytes could need).
     */
    static boolean exchange(Peer a, Peer b, SplittableRandom random, int maxWindow) {
        MemorySegment buffer = Arena.ofAuto().allocate(maxWindow);
        for (int round = 0; round < 1_000_000; round++) {
            boolean moved = move(a, b, buffer, random, maxWindow) | move(b, a, buffer, random, maxWindow);
            if (!moved) {
                return a.outbox.queue.isEmpty() && b.outbox.queue.isEmpty();
            }
        }
        return false;
    }

    private static boolean move(Peer from, Peer to, MemorySegment buffer, SplittableRandom random, int maxWindow) {
        int n = from.produce(buffer, 1 + random.nextInt(maxWindow));
        int at = 0;
        while (at < n) {
            int chunk = Math.min(n - at, 1 + random.nextInt(Math.max(1, n)));
            to.receiver.receive(buffer, at, chunk);
            at += chunk;
        }
        return n > 0;
    }
}
