// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.link.PacketSink;
import org.rdma4j.soft.link.udp.LinuxSockets;
import org.rdma4j.soft.link.udp.RoceFramer;
import org.rdma4j.soft.link.udp.UdpDatagrams;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.Gid;

/**
 * What a {@link ShmLink}'s consumer does with each lane's packets of its own ring: copy out, check as
 * a datagram ({@link UdpDatagrams}), hand to the device; bursts are handed over in place and held
 * ({@link BurstHold}) until the engine is done with them. Used by the link's single consumer.
 */
final class ShmLanes implements ShmConsumer.Handler {
    private final UdpDatagrams datagrams;
    private final PacketPool pool = new PacketPool();
    private final PacketSink sink;
    private final Gid localGid;
    private final byte[] localBytes;
    private final boolean v6;
    private final AtomicLong shmReceived;
    private final AtomicLong burstsReceived;
    private final AtomicLong burstsHeld;
    /** The link's own ring, and how to wake its consumer (set once the ring is made). */
    private volatile ShmRing own;
    private volatile Runnable wakeConsumer;

    ShmLanes(UdpDatagrams datagrams, PacketSink sink, Gid localGid, byte[] localBytes, boolean v6,
             AtomicLong shmReceived, AtomicLong burstsReceived, AtomicLong burstsHeld) {
        this.datagrams = datagrams;
        this.sink = sink;
        this.localGid = localGid;
        this.localBytes = localBytes;
        this.v6 = v6;
        this.shmReceived = shmReceived;
        this.burstsReceived = burstsReceived;
        this.burstsHeld = burstsHeld;
    }

    /** The ring these lanes are consumed from, and what wakes its sleeping consumer. */
    void attach(ShmRing ring, Runnable wake) {
        this.own = ring;
        this.wakeConsumer = wake;
    }

    private final MemorySegment[] sources = new MemorySegment[ShmRing.MAX_LANES];
    private final UdpDatagrams.Scratch[] scratch = new UdpDatagrams.Scratch[ShmRing.MAX_LANES];
    private final Gid[] gids = new Gid[ShmRing.MAX_LANES];
    private final BurstHold[] holds = new BurstHold[ShmRing.MAX_LANES];

    @Override
    public void onPacket(int lane, MemorySegment ring, long data, int length, int hopLimit, int trafficClass) {
        MemorySegment source = sources[lane];
        if (source == null || length > Packet.BUFFER_SIZE) {
            datagrams.malformed.incrementAndGet(); // a lane of the other IP version, or too long
            return;
        }
        Packet p = pool.acquire();
        MemorySegment.copy(ring, data, p.buffer, 0, length);
        p.hopLimit = hopLimit;
        p.trafficClass = trafficClass;
        shmReceived.incrementAndGet();
        if (ShmLink.CHECK_ICRC) {
            datagrams.deliver(p, length, false, source, 0, scratch[lane], localGid, localBytes, false);
        } else {
            deliverUnchecked(p, length, gids[lane]);
        }
    }

    /**
     * A burst entry: checked for what the engine trusts a burst to be (an RC WRITE's first or middle
     * packets, {@code packets} of them at a valid MTU, the payload's length matching, a unicast QP),
     * then handed over as one packet whose payload is the entry's bytes in the ring. The engine
     * checks the rest as for the packets it stands for. Returns false while the engine still holds
     * it (queued on its QP): the lane waits until the packet is released.
     */
    @Override
    public boolean onBurst(int lane, MemorySegment ring, long data, int length, int hopLimit, int trafficClass,
                           int packets, int mtu, int lastOpcode) {
        BurstHold hold = holds[lane];
        if (sources[lane] == null || hold == null || !validMtu(mtu) || packets < 2
                || packets > ShmLink.BURST_PAYLOAD / mtu) {
            datagrams.malformed.incrementAndGet();
            return true;
        }
        Packet p = pool.acquire();
        try {
            if (length < Bth.LENGTH) {
                malformed(p);
                return true;
            }
            MemorySegment.copy(ring, data, p.buffer, 0, Bth.LENGTH);
            int op = Bth.opcodeOf(p.buffer);
            int hl = Opcode.isValid(op) ? Opcode.headerLength(op) : -1;
            int payload = length - hl;
            int qpn = Bth.destQpnOf(p.buffer);
            if (hl < 0 || Opcode.transport(op) != Opcode.TRANSPORT_RC || !Opcode.isWrite(op) || Opcode.isEnd(op)
                    || payload <= (packets - 1) * mtu || payload > packets * mtu
                    || qpn < 2 || qpn == 0xFFFFFF) {
                malformed(p);
                return true;
            }
            MemorySegment.copy(ring, data, p.buffer, 0, hl); // the headers: ours, checked from here on
            if (Bth.opcodeOf(p.buffer) != op || Bth.destQpnOf(p.buffer) != qpn) {
                malformed(p); // rewritten while we copied
                return true;
            }
            p.headerLength = hl;
            p.addPiece(ring, data + hl, payload);
            p.burstPackets = packets;
            p.burstMtu = mtu;
            p.burstLastOpcode = lastOpcode;
            p.hopLimit = hopLimit;
            p.trafficClass = trafficClass;
            p.srcGid = gids[lane];
            p.dstGid = localGid;
            p.srcPort = 0;
        } catch (RuntimeException e) {
            malformed(p); // the ring closed under us
            return true;
        }
        shmReceived.addAndGet(packets);
        burstsReceived.incrementAndGet();
        hold.delivering();
        p.onRelease = hold;
        try {
            sink.receive(p); // the sink owns it now
        } catch (Throwable t) {
            datagrams.malformed.incrementAndGet();
        }
        if (hold.delivered()) {
            return true;
        }
        burstsHeld.incrementAndGet();
        return false;
    }

    /** {@link UdpDatagrams#deliver}'s checks but the ICRC's (see {@link #CHECK_ICRC}). */
    private void deliverUnchecked(Packet p, int len, Gid from) {
        try {
            int payload = RoceFramer.checkedPayload(p, len);
            if (payload < 0) {
                malformed(p);
                return;
            }
            p.setFlatPayload(payload);
            p.srcGid = from;
            p.dstGid = localGid;
            p.srcPort = 0;
            sink.receive(p);
        } catch (Throwable t) {
            datagrams.malformed.incrementAndGet();
        }
    }

    private void malformed(Packet p) {
        datagrams.malformed.incrementAndGet();
        p.release();
    }

    @Override
    public void onLaneOpened(int lane, byte[] gid, int srcPort) {
        if (holds[lane] == null) {
            holds[lane] = new BurstHold(lane);
        }
        Gid g = Gid.of(gid);
        if (g.isIpv4Mapped() == v6) {
            sources[lane] = null; // packets of the other IP version: dropped, as a socket would not get them
            return;
        }
        MemorySegment sa = Arena.ofAuto().allocate(LinuxSockets.SOCKADDR_SIZE, 8);
        LinuxSockets.writeSockaddr(sa, v6 ? gid : java.util.Arrays.copyOfRange(gid, 12, 16), srcPort);
        sources[lane] = sa;
        scratch[lane] = new UdpDatagrams.Scratch();
        gids[lane] = g;
    }

    @Override
    public void onLaneClosed(int lane) {
        sources[lane] = null;
    }

    private static boolean validMtu(int mtu) {
        return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
    }

    /**
     * The release hook of the burst packets of one lane (at most one in the engine at a time: the lane
     * waits while one is held). DELIVERING while the sink has it in hand; a release then just ends
     * that (the consumer moves on at once); HELD once the consumer left it with the engine, and a
     * release then tells the ring and wakes the consumer if it sleeps. The two CASes decide which.
     */
    private final class BurstHold implements Runnable {
        private static final int IDLE = 0;
        private static final int DELIVERING = 1;
        private static final int HELD = 2;
        private final int lane;
        private final java.util.concurrent.atomic.AtomicInteger state = new java.util.concurrent.atomic.AtomicInteger();

        BurstHold(int lane) {
            this.lane = lane;
        }

        void delivering() {
            state.set(DELIVERING);
        }

        /** After the hand-over: true if the packet was released meanwhile, else it is now HELD. */
        boolean delivered() {
            return !state.compareAndSet(DELIVERING, HELD);
        }

        @Override
        public void run() {
            if (state.compareAndSet(DELIVERING, IDLE)) {
                return;
            }
            state.set(IDLE);
            ShmRing r = own;
            r.releaseHold(lane);
            if (r.takeSleeper()) {
                wakeConsumer.run();
            }
        }
    }
}
