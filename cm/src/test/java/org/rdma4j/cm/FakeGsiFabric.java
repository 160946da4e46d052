// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.rdma4j.cm.wire.MadHeader;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * In-memory QP1s: GsiPorts keyed by GID that hand MADs to each other, and drop, duplicate or hold
 * (delay until released) the next MADs of a given attribute on command. A MAD to a GID with no port is
 * lost, as a UD datagram is. Thread safe.
 */
final class FakeGsiFabric {
    private record Packet(byte[] mad, Gid from) {
    }

    private static final Packet POISON = new Packet(new byte[0], null);

    private final Map<Gid, Port> ports = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> drop = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> dup = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> hold = new ConcurrentHashMap<>();
    private final Map<Integer, AtomicInteger> sent = new ConcurrentHashMap<>();
    private final List<Object[]> held = new ArrayList<>();

    /** The opener the engine uses in tests: QP1 of the port's GID on this fabric. */
    GsiOpener opener() {
        return (ctx, port, gidIndex) -> open(ctx.queryGid(port, gidIndex));
    }

    Port open(Gid gid) {
        Port p = new Port(gid);
        if (ports.putIfAbsent(gid, p) != null) {
            throw new VerbsException(Errno.EBUSY, "QP1 of " + gid + " is open");
        }
        return p;
    }

    /** Closes the QP1 of {@code gid} under its owner, as a removed device would. */
    void closePort(Gid gid) {
        Port p = ports.get(gid);
        if (p != null) {
            p.close();
        }
    }

    boolean isOpen(Gid gid) {
        return ports.containsKey(gid);
    }

    void dropNext(int attr, int n) {
        drop.computeIfAbsent(attr, k -> new AtomicInteger()).addAndGet(n);
    }

    void duplicateNext(int attr, int n) {
        dup.computeIfAbsent(attr, k -> new AtomicInteger()).addAndGet(n);
    }

    void holdNext(int attr, int n) {
        hold.computeIfAbsent(attr, k -> new AtomicInteger()).addAndGet(n);
    }

    /** Delivers the held MADs now. */
    void releaseHeld() {
        List<Object[]> l;
        synchronized (held) {
            l = new ArrayList<>(held);
            held.clear();
        }
        for (Object[] h : l) {
            deliver((Gid) h[0], (Packet) h[1]);
        }
    }

    /** How many MADs of {@code attr} were sent (dropped ones included). */
    int sent(int attr) {
        AtomicInteger c = sent.get(attr);
        return c == null ? 0 : c.get();
    }

    void resetCounts() {
        sent.clear();
    }

    /** Forgets the drop/duplicate/hold commands not used up yet. */
    void clearFaults() {
        drop.clear();
        dup.clear();
        hold.clear();
    }

    /** Puts raw bytes on the wire to {@code to}, as if {@code from} had sent them. */
    void inject(Gid to, Gid from, byte[] mad) {
        deliver(to, new Packet(mad.clone(), from));
    }

    private static boolean take(Map<Integer, AtomicInteger> m, int attr) {
        AtomicInteger c = m.get(attr);
        return c != null && c.getAndUpdate(v -> v > 0 ? v - 1 : 0) > 0;
    }

    private void route(Gid from, Gid to, byte[] mad) {
        int attr = MemorySegment.ofArray(mad).get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(
                java.nio.ByteOrder.BIG_ENDIAN), MadHeader.ATTR_ID_OFFSET) & 0xFFFF;
        sent.computeIfAbsent(attr, k -> new AtomicInteger()).incrementAndGet();
        if (take(drop, attr)) {
            return;
        }
        Packet p = new Packet(mad, from);
        if (take(hold, attr)) {
            synchronized (held) {
                held.add(new Object[] {to, p});
            }
            return;
        }
        deliver(to, p);
        if (take(dup, attr)) {
            deliver(to, p);
        }
    }

    private void deliver(Gid to, Packet p) {
        Port dst = ports.get(to);
        if (dst != null) {
            dst.queue.add(p);
        }
    }

    final class Port implements GsiPort {
        final Gid gid;
        final LinkedBlockingQueue<Packet> queue = new LinkedBlockingQueue<>();
        volatile boolean closed;

        Port(Gid gid) {
            this.gid = gid;
        }

        @Override
        public int portNum() {
            return 1;
        }

        @Override
        public Gid localGid() {
            return gid;
        }

        @Override
        public void send(MemorySegment mad, Gid dest, int pkey) {
            if (closed) {
                throw new VerbsException(Errno.EBADF, "closed");
            }
            if (mad.byteSize() < MAD_SIZE) {
                throw new VerbsException(Errno.EINVAL, "short MAD");
            }
            route(gid, dest, mad.asSlice(0, MAD_SIZE).toArray(ValueLayout.JAVA_BYTE));
        }

        @Override
        public boolean receive(MemorySegment mad, Source from, long timeoutNanos) {
            if (closed) {
                throw new VerbsException(Errno.EBADF, "closed");
            }
            Packet p;
            try {
                p = timeoutNanos <= 0 ? queue.poll() : queue.poll(timeoutNanos, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new VerbsException(Errno.EBADF, "interrupted");
            }
            if (p == POISON || closed) {
                throw new VerbsException(Errno.EBADF, "closed");
            }
            if (p == null) {
                return false;
            }
            MemorySegment.copy(p.mad(), 0, mad, ValueLayout.JAVA_BYTE, 0, Math.min(p.mad().length, MAD_SIZE));
            if (p.mad().length < MAD_SIZE) {
                mad.asSlice(p.mad().length, MAD_SIZE - p.mad().length).fill((byte) 0);
            }
            from.gid = p.from();
            from.qpn = 1;
            from.pkey = 0xFFFF;
            return true;
        }

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                ports.remove(gid, this);
                queue.add(POISON);
            }
        }
    }
}
