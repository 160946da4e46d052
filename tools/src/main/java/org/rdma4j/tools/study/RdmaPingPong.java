// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import org.rdma4j.tools.text.PeerText;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.QpEndpoint;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The RDMA ping-pongs of {@code study latency}, one RC QP per side ({@link Endpoint}: its buffer's first
 * {@code size} bytes are where the peer's message lands, the next {@code size} what this side sends):
 * <ul>
 * <li>{@code send-busy}, {@code send-events}: SEND/RECV; each side waits for its receive and send
 * completions by spinning on the CQ or with completion events (arm, poll, wait).</li>
 * <li>{@code write-busy}: RDMA WRITE into the peer's buffer, which the peer polls for the message's last
 * byte (a new value each round trip), as {@code ib_write_lat} does; nobody waits for an event.</li>
 * <li>{@code write-events}: RDMA WRITE with immediate, whose receive completion wakes the peer through
 * its completion channel.</li>
 * </ul>
 * The echo side sends back what it received; the client checks it. Every wait is bounded. Stateless;
 * one call per side.
 */
final class RdmaPingPong {
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();

    private RdmaPingPong() {}

    /**
     * The client: {@code warmup + iters} round trips of {@code m}; returns the last {@code iters} in ns and
     * the retransmissions both devices counted over the run.
     */
    static Measured client(LatencyMethod m, LatencySettings s, Device device, Rendezvous r) {
        try (Endpoint ep = new Endpoint(device, s.ibPort(), s.gidIndex(), s.size())) {
            Peer peer = connect(ep, m, r, false);
            long retransmits0 = retransmits(ep, s);
            int size = s.size();
            MemorySegment landing = ep.buf.asSlice(0, size);
            MemorySegment source = ep.buf.asSlice(size, size);
            RecvWorkRequest recv = new RecvWorkRequest().wrId(1).sge(ep.pingAddress(), size, ep.mr.lkey());
            SendWorkRequest wr = request(m, ep, peer, size, ep.pongAddress());
            long[] rtt = new long[s.iters()];
            int total = s.warmup() + s.iters();
            boolean events = m.blocking;
            for (int i = 0; i < total; i++) {
                long t0 = System.nanoTime();
                stamp(source, i);
                if (m == LatencyMethod.WRITE_BUSY) {
                    ep.qp.postSend(wr);
                    awaitFlag(landing, flag(i), "client: the WRITE back of round trip " + i);
                    ep.awaitSend(false, "client: WRITE " + i);
                } else {
                    if (m == LatencyMethod.WRITE_EVENTS) {
                        wr.immData(i);
                    }
                    ep.qp.postRecv(recv);
                    ep.qp.postSend(wr);
                    ep.awaitSend(events, "client: " + m.id + " " + i);
                    WorkCompletion w = ep.awaitRecv(events, "client: the answer to " + i);
                    if (m == LatencyMethod.WRITE_EVENTS && (w.opcode() != WcOpcode.RECV_RDMA_WITH_IMM
                            || w.immData() != i)) {
                        throw new StudyFailure("client: round trip " + i + " completed as " + w.opcode()
                                + " with immediate " + w.immData());
                    }
                }
                long t1 = System.nanoTime();
                verify(landing, i, "client: the answer to " + i);
                int timed = i - s.warmup();
                if (timed >= 0) {
                    rtt[timed] = t1 - t0;
                }
            }
            long mine = delta(retransmits0, retransmits(ep, s));
            String done = r.swap("done", m.id + ": the echo side finishing");
            return new Measured(rtt, total(device.name(), mine, done));
        }
    }

    /** The echo side of {@code m}: answers {@code warmup + iters} messages with their own bytes. */
    static void server(LatencyMethod m, LatencySettings s, Device device, Rendezvous r) {
        try (Endpoint ep = new Endpoint(device, s.ibPort(), s.gidIndex(), s.size())) {
            int size = s.size();
            RecvWorkRequest recv = new RecvWorkRequest().wrId(1).sge(ep.pingAddress(), size, ep.mr.lkey());
            if (m != LatencyMethod.WRITE_BUSY) {
                ep.qp.postRecv(recv); // before the client can send anything
            }
            Peer peer = connect(ep, m, r, true);
            long retransmits0 = retransmits(ep, s);
            MemorySegment landing = ep.buf.asSlice(0, size);
            SendWorkRequest wr = request(m, ep, peer, size, ep.pingAddress()); // the answer is what came
            int total = s.warmup() + s.iters();
            boolean events = m.blocking;
            for (int i = 0; i < total; i++) {
                if (m == LatencyMethod.WRITE_BUSY) {
                    awaitFlag(landing, flag(i), "server: the WRITE of round trip " + i);
                    ep.qp.postSend(wr);
                    ep.awaitSend(false, "server: WRITE " + i);
                } else {
                    WorkCompletion w = ep.awaitRecv(events, "server: message " + i);
                    int imm = w.immData();
                    ep.qp.postRecv(recv);
                    if (m == LatencyMethod.WRITE_EVENTS) {
                        wr.immData(imm);
                    }
                    ep.qp.postSend(wr);
                    ep.awaitSend(events, "server: answer " + i);
                }
            }
            r.swap("done " + device.name() + " " + delta(retransmits0, retransmits(ep, s)),
                    m.id + ": the client finishing");
        }
    }

    /** The device's {@code retransmits} counter, or -1 where it has none. */
    private static long retransmits(Endpoint ep, LatencySettings s) {
        try {
            Long v = ep.ctx.counters(s.ibPort()).get("retransmits");
            return v == null ? -1 : v;
        } catch (RuntimeException e) {
            return -1; // a device without counters
        }
    }

    private static long delta(long before, long after) {
        return before < 0 || after < 0 ? -1 : after - before;
    }

    /**
     * The run's retransmissions: the client's device's and the echo side's (from its "done DEVICE N"),
     * counted once when both QPs are on one device; -1 when either does not say.
     */
    private static long total(String device, long mine, String done) {
        String[] f = done.split(" ");
        long theirs;
        try {
            theirs = f.length == 3 && f[0].equals("done") ? Long.parseLong(f[2]) : -1;
        } catch (NumberFormatException e) {
            theirs = -1;
        }
        if (mine < 0 || theirs < 0) {
            return -1;
        }
        return f[1].equals(device) ? Math.max(mine, theirs) : mine + theirs;
    }

    /** The peer's QP and buffer, as it said them. */
    private record Peer(QpEndpoint endpoint, long landing, int rkey) {}

    /** Swaps the endpoints and buffers, connects, and waits until both QPs are ready to receive. */
    private static Peer connect(Endpoint ep, LatencyMethod m, Rendezvous r, boolean server) {
        String mine = ep.prepared.endpoint() + " " + Long.toHexString(ep.pingAddress()) + " "
                + Integer.toHexString(ep.mr.rkey());
        String theirs = r.swap(mine, m.id + ": exchanging QP endpoints");
        Peer peer;
        try {
            String[] f = theirs.split(" ");
            if (f.length != 3) {
                throw new IllegalArgumentException("not ENDPOINT ADDRESS RKEY");
            }
            peer = new Peer(QpEndpoint.parse(f[0]), Long.parseUnsignedLong(f[1], 16), Integer.parseUnsignedInt(f[2], 16));
        } catch (IllegalArgumentException e) {
            throw new StudyFailure(m.id + ": the " + (server ? "client" : "echo side") + " sent no QP endpoint ("
                    + PeerText.printable(theirs, 200) + "): " + e.getMessage(), e);
        }
        ep.prepared.handshake(peer.endpoint());
        r.swap("ready", m.id + ": the other QP getting ready");
        return peer;
    }

    /** The one work request a side posts over and over. */
    private static SendWorkRequest request(LatencyMethod m, Endpoint ep, Peer peer, int size, long from) {
        SendWorkRequest wr = new SendWorkRequest().wrId(2).flags(SendFlag.SIGNALED | ep.inlineFlag)
                .sge(from, size, ep.mr.lkey());
        return switch (m) {
            case SEND_BUSY, SEND_EVENTS -> wr.send();
            case WRITE_BUSY -> wr.write(peer.landing(), peer.rkey());
            case WRITE_EVENTS -> wr.writeWithImm(peer.landing(), peer.rkey(), 0);
            default -> throw new IllegalArgumentException(m.id + " is not an RDMA method");
        };
    }

    /** The last byte of round trip {@code i}: never 0 and never the previous one's. */
    private static byte flag(int i) {
        return (byte) (i % 255 + 1);
    }

    /** Marks a message: round trip {@code i} in its first bytes (up to 4, before the last) and the flag last. */
    private static void stamp(MemorySegment msg, int i) {
        int n = (int) msg.byteSize();
        for (int b = 0; b < Math.min(4, n - 1); b++) {
            msg.set(ValueLayout.JAVA_BYTE, b, (byte) (i >>> (8 * b)));
        }
        msg.set(ValueLayout.JAVA_BYTE, n - 1, flag(i));
    }

    private static void verify(MemorySegment msg, int i, String what) {
        int n = (int) msg.byteSize();
        boolean ok = (byte) BYTE.getAcquire(msg, (long) (n - 1)) == flag(i);
        for (int b = 0; ok && b < Math.min(4, n - 1); b++) {
            ok = msg.get(ValueLayout.JAVA_BYTE, b) == (byte) (i >>> (8 * b));
        }
        if (!ok) {
            throw new StudyFailure(what + ": it does not hold the message's bytes");
        }
    }

    /** Spins until the last byte of {@code msg} is {@code flag}, for at most {@link Endpoint#COMPLETION_TIMEOUT_NS}. */
    private static void awaitFlag(MemorySegment msg, byte flag, String what) {
        long last = msg.byteSize() - 1;
        long start = 0;
        for (int spins = 0; (byte) BYTE.getAcquire(msg, last) != flag; spins++) {
            Thread.onSpinWait();
            if ((spins & 1023) == 1023) {
                long now = System.nanoTime();
                if (start == 0) {
                    start = now;
                } else if (now - start > Endpoint.COMPLETION_TIMEOUT_NS) {
                    throw new StudyFailure(what + ": nothing arrived within "
                            + Endpoint.COMPLETION_TIMEOUT_NS / 1_000_000_000L + " s");
                }
                if (Thread.currentThread().isInterrupted()) {
                    throw new StudyFailure(what + ": interrupted (the other side failed)");
                }
            }
        }
    }
}
