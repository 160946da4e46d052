// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.soft.link.LinkLog;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.UdpHeader;
import org.rdma4j.verbs.Gid;

/**
 * The UDP link's send side: frames packets into its send slots ({@link RoceFramer}) and hands them to
 * the socket, one datagram a call or a run in one sendmmsg; stages (defers) what a receiving thread
 * sends meanwhile and what a busy poller posts (doorbell batching), holds a poller's own ACKs for its
 * reply to take along (ACK hold), and hands packets to the link's own address to {@link UdpSelfDelivery}.
 * Every field the receive side reads or sets ({@link #deferring}, {@link #lastPoller}, {@link
 * #doorbellPoster}, {@link #agentInSocket}, {@link #deferred}, {@link #closed}) is here; the send
 * slots and their bookkeeping are guarded by the send lock. Thread safe.
 */
final class UdpSendStage {
    private static final int DATAGRAM_MAX = Packet.BUFFER_SIZE;
    /** The IP Identification of the IPv4 datagrams the link frames (raw mode sends it; the ICRC covers it). */
    static final int IPV4_ID = 0x1234;
    /** One send slot: the longest datagram and room for the IP and UDP headers, 8-byte aligned. */
    private static final int SLOT_SIZE = (DATAGRAM_MAX + 64 + 7) & ~7;

    private final UdpSocket socket;
    private final UdpDatagrams datagrams;
    private final UdpSelfDelivery self;
    private final boolean v6;
    private final int remotePort;
    private final Gid localGid;
    /** Packets to {@link #localGid} are this device's: the address is not shared with the remote port's device. */
    private final boolean selfLoopback;
    /** The link is closed: nothing more leaves (read by the receive side too). */
    volatile boolean closed;
    final AtomicLong sent = new AtomicLong();
    final AtomicLong dropped;
    private final Object sendLock = new Object();
    /**
     * The thread receiving in {@link UdpLink#poll()} or {@link UdpLink#await} now, while it does: what it
     * sends meanwhile (ACKs, mostly) is framed and staged, not sent, and leaves with the next send of any
     * thread in one sendmmsg (a busy-polling application's reply, typically: the ACK of the message it
     * replies to is then no system call of its own between receiving and replying), or at the next
     * {@link UdpLink#poll()} (by the deferring thread itself: the first one {@link #ACK_HOLD_NS} or more
     * after the first was staged), {@link UdpLink#await}, {@link UdpLink#pollerBlocks()}, or receive-agent
     * round, whichever comes first (while threads poll the agent parks at most {@link
     * UdpReceiver#MAX_STANDBY_NS} ns; while it waits in the socket instead, the poller sends what it deferred
     * before poll() or await() returns). The receive agent and {@link UdpLink#receiveArrived()} defer
     * too, and send what they deferred right after their batch. Written and compared only by the thread
     * itself.
     */
    Thread deferring;
    /** The thread that last called {@link UdpLink#poll()}: a busy poller of this link. */
    volatile Thread lastPoller;
    /**
     * Doorbell batching: the polling thread ({@link #lastPoller}) that sent since its last poll; its next
     * sends are staged like a poller's deferred packets (up to a send batch, one sendmmsg, runs of
     * equal datagrams as one GSO message), until its next {@link UdpLink#poll()}, {@link UdpLink#await},
     * {@link UdpLink#pollerBlocks()}, a send by another thread, the receive agent's next round (it parks
     * at most {@link UdpReceiver#MAX_STANDBY_NS} while threads poll) or {@link UdpLink#close()}. Never while
     * the agent waits in the socket: a sender that staged after the agent went there sends at once.
     * Cleared by every poll and await.
     */
    volatile Thread doorbellPoster;
    final AtomicLong doorbellPackets = new AtomicLong();
    /**
     * Slots 1..deferred hold staged datagrams (volatile: pollers and the agent look without the lock);
     * slot 0 is kept for a request that goes before them.
     */
    volatile int deferred;
    /**
     * Every deferred datagram is a response (an ACK, a READ or atomic response) to one QP: {@link
     * #deferredQpn} at {@link #deferredDst}.
     */
    private boolean deferredResponsesOnly;
    private int deferredQpn;
    private Gid deferredDst;
    /** The receive agent waits in the socket (poll(2), up to {@link UdpReceiver#AGENT_WAIT_MS}), not in a stand-by park. */
    volatile boolean agentInSocket;
    /** When the first of the deferred packets was staged (System.nanoTime()), and by which thread. */
    private long deferredSinceNs;
    private Thread deferredBy;
    /**
     * How long a poller's next {@link UdpLink#poll()} that finds the deferred packets all responses it staged
     * itself leaves them staged (-Drdma4j.udp.ackHoldMicros, default 5): in a ping-pong the message
     * the reply waits for (the ACK of this side's last message) often arrives a microsecond or two
     * after the peer's request, so the reply is posted a few polls later; flushing the ACK at the first
     * of those polls put a system call of its own in front of the reply (perftest's send_lat and
     * write_lat between two JVMs; docs/decisions/0006-ack-coalescing-and-deferral.md). Bounded: a poller
     * that sends nothing sends them once they are this old.
     */
    static final long ACK_HOLD_NS = Math.max(0, Long.getLong("rdma4j.udp.ackHoldMicros", 5)) * 1_000;
    /** {@link #ACK_HOLD_NS}, or what a test set ({@link #holdAcksFor}). */
    private volatile long ackHoldNs = ACK_HOLD_NS;
    private int deferredTtl;
    private int deferredTos;
    private boolean deferredMulticast;
    final AtomicLong deferredPackets = new AtomicLong();
    final AtomicLong rideAlongSends = new AtomicLong();
    final AtomicLong overtakingSends = new AtomicLong();
    /** Send slots: one datagram each, framed before the socket sends the run (slot 0: one at a time). */
    private final MemorySegment[] sendBufs;
    private final byte[] destBytes;
    private final RoceFramer sendFramer;
    /** What the socket sends from each send slot: the whole IP packet (raw mode), or from the BTH on. */
    private final MemorySegment[] sendDatagrams;

    UdpSendStage(UdpSocket socket, UdpDatagrams datagrams, UdpSelfDelivery self, AtomicLong dropped, boolean v6,
                 byte[] localBytes, int port, int remotePort, Gid localGid, String name) {
        this.socket = socket;
        this.datagrams = datagrams;
        this.self = self;
        this.dropped = dropped;
        this.v6 = v6;
        this.remotePort = remotePort;
        this.localGid = localGid;
        this.selfLoopback = remotePort == port;
        this.destBytes = new byte[v6 ? 16 : 4];
        this.sendFramer = new RoceFramer(v6, localBytes, port);
        int slots = socket.sendBatchUnavailable() == null ? UdpSocket.SEND_BATCH : 1;
        if (slots == 1) {
            System.getLogger(LinkLog.CATEGORY).log(System.Logger.Level.DEBUG,
                    "udp link " + name + ": unbatched sends: " + socket.sendBatchUnavailable());
        }
        sendBufs = new MemorySegment[slots];
        sendDatagrams = new MemorySegment[slots];
        MemorySegment slotMemory = Arena.ofAuto().allocate((long) SLOT_SIZE * slots, 8);
        for (int i = 0; i < slots; i++) {
            sendBufs[i] = slotMemory.asSlice((long) SLOT_SIZE * i, SLOT_SIZE);
            sendDatagrams[i] = socket.ipHeaderLength() > 0 ? sendBufs[i] : sendBufs[i].asSlice(UdpHeader.LENGTH);
        }
    }

    /** Sends {@code p} as {@link UdpLink#send(Packet)}: to its own device, else through the socket. */
    void send(Packet p) {
        boolean owned = true;
        try {
            Gid dst = p.dstGid;
            if (!routable(dst)) {
                dropped.incrementAndGet();
                return;
            }
            if (toSelf(dst)) {
                owned = false; // the receive path owns it now (or it was released)
                self.deliver(p);
                return;
            }
            synchronized (sendLock) {
                sendLocked(p, dst);
            }
        } finally {
            if (owned) {
                p.release();
            }
        }
    }

    /** Whether a packet for {@code dst} can leave: the link is open and {@code dst} is of its IP version. */
    private boolean routable(Gid dst) {
        return !closed && dst != null && dst.isIpv4Mapped() != v6;
    }

    /** Whether a packet for the routable {@code dst} is this device's own (see the class comment): not sent. */
    private boolean toSelf(Gid dst) {
        return selfLoopback && dst.equals(localGid);
    }

    /**
     * The datagram's length from the BTH on (headers, payload, pad, ICRC), or -1 after counting why it
     * is not sent: corrupted before it reached us (fault injection in front of this link: a NIC would
     * drop it), or too long for a datagram.
     */
    static int bthOnwardLength(Packet p, RoceFramer framer, UdpDatagrams datagrams, AtomicLong dropped) {
        int bthLength = framer.bthOnwardLength(p);
        if (bthLength == RoceFramer.BAD_ICRC) {
            datagrams.badIcrc.incrementAndGet();
        } else if (bthLength == RoceFramer.TOO_LONG) {
            dropped.incrementAndGet();
        }
        return bthLength;
    }

    /**
     * Sends {@code p}; on the thread that is receiving in {@link UdpLink#poll()} or {@link UdpLink#await}, defers it
     * instead (see {@link #deferring}). What was deferred leaves in the same sendmmsg: after {@code p}
     * when {@code p} is a request and everything deferred is a response to the same QP as {@code p}
     * (its ACKs and READ or atomic responses: a request and a response never share a PSN space, so the
     * peer's reply is not held up by the ACK's trip through the kernel), else before it. Nothing
     * overtakes a response to another QP: what the application sends after it saw a completion (a
     * disconnect request on QP1, a message on another QP) must not reach the peer before the ACK of
     * what completed, or the peer could flush a work request that was delivered.
     */
    private void sendLocked(Packet p, Gid dst) {
        int ttl = RoceFramer.hopLimitOf(p);
        int tos = p.trafficClass & 0xFF;
        boolean multicast = dst.isMulticast();
        int k = deferred;
        if (k > 0 && (k + 2 > sendBufs.length || ttl != deferredTtl || tos != deferredTos
                || multicast != deferredMulticast)) {
            flushDeferredLocked();
            k = 0;
        }
        Thread current = Thread.currentThread();
        boolean doorbell = doorbellPoster == current;
        boolean defer = (deferring == current || doorbell) && sendBufs.length > 2
                && socket.sendBatchUnavailable() == null;
        if (!defer && k == 0) {
            int length = frameLocked(p, dst, 0);
            if (length < 0) {
                return;
            }
            socket.setHopLimitAndClass(multicast, ttl, tos);
            long r = socket.send(sendDatagrams[0], length, destBytes, remotePort);
            if (r < 0) {
                dropped.incrementAndGet();
            } else {
                sent.incrementAndGet();
            }
            ringsDoorbellNext(current);
            return;
        }
        int op = Bth.opcodeOf(p.buffer);
        int qpn = Bth.destQpnOf(p.buffer);
        boolean first = !defer && deferredResponsesOnly && Opcode.isRequest(op) && qpn == deferredQpn
                && dst.equals(deferredDst);
        int slot = first ? 0 : k + 1;
        int length = frameLocked(p, dst, slot);
        if (length >= 0) {
            socket.stage(slot, sendDatagrams[slot], length, destBytes, remotePort);
        }
        if (defer) {
            if (length >= 0) {
                if (k == 0) {
                    deferredSinceNs = System.nanoTime();
                    deferredBy = current;
                    deferredTtl = ttl;
                    deferredTos = tos;
                    deferredMulticast = multicast;
                    deferredResponsesOnly = true;
                    deferredQpn = qpn;
                    deferredDst = dst;
                }
                deferredResponsesOnly &= Opcode.isResponse(op) && qpn == deferredQpn && dst.equals(deferredDst);
                deferred = k + 1; // last: flushDeferred() reads it without the lock
                if (deferring == current) {
                    deferredPackets.incrementAndGet();
                } else {
                    doorbellPackets.incrementAndGet();
                    if (agentInSocket) {
                        // the agent went to wait in the socket (it flushed before, maybe before this
                        // packet was staged: both fields are volatile, so one of the two sees the other)
                        flushDeferredLocked();
                    }
                }
            }
            return;
        }
        // p takes what was deferred along, in one call
        deferred = 0;
        int from = first && length >= 0 ? 0 : 1;
        int count = k + (length >= 0 ? 1 : 0);
        if (closed) {
            dropped.addAndGet(count);
            return;
        }
        rideAlongSends.incrementAndGet();
        if (first && length >= 0) {
            overtakingSends.incrementAndGet();
        }
        sendStagedLocked(multicast, ttl, tos, from, count);
        ringsDoorbellNext(current);
    }

    /** After {@code current} sent: if it is the link's poller, its next sends are batched (doorbellPoster). */
    private void ringsDoorbellNext(Thread current) {
        if (lastPoller == current && doorbellPoster != current && deferring != current) {
            doorbellPoster = current;
        }
    }

    /** Sends the packets a poller deferred (staged in slots 1..deferred), if any. */
    private void flushDeferredLocked() {
        int k = deferred;
        if (k == 0) {
            return;
        }
        deferred = 0;
        if (closed) {
            dropped.addAndGet(k);
            return;
        }
        sendStagedLocked(deferredMulticast, deferredTtl, deferredTos, 1, k);
    }

    /** Sends staged slots {@code from}..{@code from+count}-1 with these socket options; counts what went and what was lost. */
    private void sendStagedLocked(boolean multicast, int ttl, int tos, int from, int count) {
        socket.setHopLimitAndClass(multicast, ttl, tos);
        int n = socket.sendStaged(from, count);
        sent.addAndGet(n);
        if (n < count) {
            dropped.addAndGet(count - n);
        }
    }

    /** Sends what a poller deferred now (by any thread but the deferring one while it receives). */
    void flushDeferred() {
        if (deferred > 0) {
            synchronized (sendLock) {
                flushDeferredLocked();
            }
        }
    }

    /**
     * Frames {@code p} for {@code dst} into send slot {@code slot} (the destination's address into
     * {@link #destBytes}): the bytes from the BTH on, and in raw mode the IP header; returns what the
     * socket sends from {@link #sendDatagrams}[slot], or -1 after counting why it is not sent.
     */
    private int frameLocked(Packet p, Gid dst, int slot) {
        int bthLength = bthOnwardLength(p, sendFramer, datagrams, dropped);
        if (bthLength < 0) {
            return -1;
        }
        for (int i = 0; i < destBytes.length; i++) {
            destBytes[i] = dst.byteAt(v6 ? i : 12 + i);
        }
        MemorySegment buf = sendBufs[slot];
        int ipLen = socket.ipHeaderLength();
        boolean raw = ipLen > 0;
        long bth = ipLen + UdpHeader.LENGTH;
        RoceFramer.copyBthOnward(p, buf, bth, bthLength);
        int ttl = RoceFramer.hopLimitOf(p);
        int tos = p.trafficClass & 0xFF;
        // Raw mode sends the IP header written here; the others only compute the ICRC over it.
        sendFramer.frame(raw ? buf : sendFramer.pseudo, destBytes, remotePort, tos, ttl, raw ? IPV4_ID : 0,
                buf, bth, bthLength);
        int udpLength = UdpHeader.LENGTH + bthLength;
        return raw ? ipLen + udpLength : bthLength;
    }

    /** From now on one system call per datagram, for {@code reason} (tests: a kernel without sendmmsg). */
    void stopSendBatching(String reason) {
        synchronized (sendLock) {
            socket.stopSendBatching(reason);
        }
    }

    /**
     * Sends {@code count} packets in order as {@link #send(Packet)} would, each datagram byte for byte
     * the same, but a run of up to {@link UdpSocket#SEND_BATCH} of them (same hop limit, class and
     * multicast-ness: those are socket options) in one sendmmsg. A packet to this link's own address
     * is delivered between the runs, outside the send lock, as {@link #send(Packet)} delivers it.
     * Only while sends are batched ({@link UdpLink#sendsInBatches()}). Takes ownership of every packet and
     * clears its slot; returns how many were lost because their memory was freed before the copy.
     */
    int send(Packet[] packets, int count) {
        int freed = 0;
        int i = 0;
        while (i < count) {
            Packet p = packets[i];
            Gid dst = p.dstGid;
            if (!routable(dst)) {
                packets[i++] = null;
                dropped.incrementAndGet();
                p.release();
            } else if (toSelf(dst)) {
                packets[i++] = null;
                try {
                    self.deliver(p);
                } catch (IllegalStateException e) {
                    freed++;
                }
            } else {
                synchronized (sendLock) {
                    int end = runEnd(packets, i, count);
                    freed += sendRunLocked(packets, i, end);
                    i = end;
                }
            }
        }
        return freed;
    }

    /**
     * Where the run of packets that leave in one sendmmsg, from the routable, not-to-self
     * {@code packets[from]}, ends: at most {@link UdpSocket#SEND_BATCH}, all routable and not to self
     * (those are handled outside the send lock), and all with the same hop limit, class and
     * multicast-ness (socket options: another one needs another call).
     */
    private int runEnd(Packet[] packets, int from, int count) {
        Packet first = packets[from];
        int ttl = RoceFramer.hopLimitOf(first);
        int tos = first.trafficClass & 0xFF;
        boolean multicast = first.dstGid.isMulticast();
        int end = from + 1;
        while (end < count && end - from < UdpSocket.SEND_BATCH) {
            Packet p = packets[end];
            Gid dst = p.dstGid;
            if (!routable(dst) || toSelf(dst) || RoceFramer.hopLimitOf(p) != ttl || (p.trafficClass & 0xFF) != tos
                    || dst.isMulticast() != multicast) {
                break;
            }
            end++;
        }
        return end;
    }

    /**
     * Frames {@code packets[from..to)} (one run, see {@link #runEnd}) into the send slots and sends them
     * in one sendmmsg; takes ownership of each packet and clears its slot. Returns how many were lost
     * because the sender's memory was freed under the copy (as in {@link #send(Packet)}).
     */
    private int sendRunLocked(Packet[] packets, int from, int to) {
        flushDeferredLocked(); // they left first; the run uses the slots from 0
        Packet first = packets[from];
        int ttl = RoceFramer.hopLimitOf(first);
        int tos = first.trafficClass & 0xFF;
        boolean multicast = first.dstGid.isMulticast();
        int freed = 0;
        int k = 0;
        for (int i = from; i < to; i++) {
            Packet p = packets[i];
            packets[i] = null;
            try {
                int length = frameLocked(p, p.dstGid, k);
                if (length >= 0) {
                    socket.stage(k, sendDatagrams[k], length, destBytes, remotePort);
                    k++;
                }
            } catch (IllegalStateException e) {
                freed++;
            } finally {
                p.release();
            }
        }
        if (k > 0) {
            sendStagedLocked(multicast, ttl, tos, 0, k);
            ringsDoorbellNext(Thread.currentThread());
        }
        return freed;
    }

    /**
     * Whether what is deferred is only responses that {@code current} staged while receiving, less than
     * {@link #ACK_HOLD_NS} ago: its poll leaves them for its reply to take along (see ACK_HOLD_NS). Read
     * without the lock: {@link #deferred} (volatile) is read first and written last.
     */
    boolean heldForReply(Thread current) {
        return deferredResponsesOnly && deferredBy == current && System.nanoTime() - deferredSinceNs < ackHoldNs;
    }

    /** Tests: how long a poller's own deferred responses outlive its polls (see ACK_HOLD_NS). */
    void holdAcksFor(long ns) {
        ackHoldNs = ns;
    }

    /** Tests: whether a poll by {@code t} now would leave what is deferred staged. */
    boolean holdsDeferredFor(Thread t) {
        return deferred > 0 && heldForReply(t);
    }

    /**
     * After a receiving thread stopped deferring: if the agent waits in the socket (up to
     * AGENT_WAIT_MS), not in a bounded park, it would not send what was deferred soon, so it leaves now,
     * without riding along.
     */
    void flushIfAgentInSocket() {
        if (deferred > 0 && agentInSocket) {
            flushDeferred();
        }
    }

    /** A poll or wait of any thread ends doorbell batching ({@link #doorbellPoster}). */
    void endDoorbell() {
        if (doorbellPoster != null) {
            doorbellPoster = null;
        }
    }
}
