// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.lang.foreign.Arena;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.*;

/**
 * One RC QP on a soft device, connected to a peer that does not exist: the test plays the peer. What
 * the device sends goes to {@link Options#link} or, by default, to a link that counts the requests
 * ({@link #requests}) and drops everything; what the peer would answer the test injects with
 * {@link #acknowledge}. The device is made by the test (fake clock or not) and removed by
 * {@link #close}.
 */
final class ScriptedPeer implements AutoCloseable {
    /** How the QP and its surroundings differ from the defaults. */
    static final class Options {
        Link link;
        BooleanSupplier backlogged = () -> false;
        int cqDepth = 16;
        QpCap cap = new QpCap(4, 4, 1, 1, 0);
        long mrBytes = 64;
        int retryCnt = 7;
        int rnrRetry = 7;

        /** Sends go to {@code link} instead of the request-counting one. */
        Options link(Link link) {
            this.link = link;
            return this;
        }

        /** What the counting link says when asked whether its receive path is behind. */
        Options backlogged(BooleanSupplier backlogged) {
            this.backlogged = backlogged;
            return this;
        }

        Options cq(int depth) {
            this.cqDepth = depth;
            return this;
        }

        Options cap(QpCap cap) {
            this.cap = cap;
            return this;
        }

        Options mrBytes(long bytes) {
            this.mrBytes = bytes;
            return this;
        }

        Options retries(int retryCnt, int rnrRetry) {
            this.retryCnt = retryCnt;
            this.rnrRetry = rnrRetry;
            return this;
        }
    }

    final Device device;
    final Hca hca;
    final Context ctx;
    final ProtectionDomain pd;
    final CompletionQueue cq;
    final QueuePair qp;
    final MemoryRegion mr;
    final Gid peerGid;
    final Gid localGid;
    /** Requests (not responses) the device sent, when the default link is in use. */
    final AtomicInteger requests = new AtomicInteger();
    private final Arena arena;
    private final PacketPool pool = new PacketPool();

    ScriptedPeer(Device device, String peerGid, int peerQpn) {
        this(device, peerGid, peerQpn, new Options());
    }

    ScriptedPeer(Device device, String peerGid, int peerQpn, Options o) {
        this.device = device;
        this.hca = ((SoftDevice) device).hca;
        hca.setLink(o.link != null ? o.link : countingLink(o.backlogged));
        ctx = device.open();
        pd = ctx.allocPd();
        cq = ctx.createCq(o.cqDepth);
        qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(o.cap));
        this.peerGid = Gid.parse(peerGid);
        localGid = ctx.queryGid(1, 1);
        ReceivePathFuzzTest.Connect.bringUp(qp, QpType.RC, this.peerGid, peerQpn, o.retryCnt, o.rnrRetry);
        arena = Arena.ofShared();
        mr = pd.regMr(arena.allocate(o.mrBytes, 8), Access.LOCAL_WRITE);
    }

    private Link countingLink(BooleanSupplier backlogged) {
        return new Link() {
            @Override
            public void send(Packet p) {
                if (!Opcode.isResponse(new Bth().wrap(p.buffer, 0).opcode())) {
                    requests.incrementAndGet();
                }
                p.release();
            }

            @Override
            public boolean receiveBacklogged() {
                return backlogged.getAsBoolean();
            }
        };
    }

    /** A signaled 16-byte SEND from the start of the MR. */
    void postSend(long wrId) {
        qp.postSend(new SendWorkRequest().wrId(wrId).opcode(WrOpcode.SEND).sge(mr, 0, 16).flags(SendFlag.SIGNALED));
    }

    /** An ACK (or NAK) for {@code psn} from the peer, with AETH syndrome {@code syndrome}. */
    void acknowledge(int psn, int syndrome) {
        Packet p = pool.acquire();
        new Bth().wrap(p.buffer, 0).write(Opcode.RC_ACKNOWLEDGE, false, 0, 0xFFFF, qp.qpn(), false, psn);
        new Aeth().wrap(p.buffer, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE, Opcode.HEADER_AETH)).write(syndrome, 1);
        p.headerLength = Opcode.headerLength(Opcode.RC_ACKNOWLEDGE);
        p.srcGid = peerGid;
        p.dstGid = localGid;
        hca.receive(p);
    }

    /** A plain ACK for {@code psn}. */
    void ack(int psn) {
        acknowledge(psn, Aeth.ACK_CREDITS_INVALID);
    }

    /** A request packet from the peer with the given header length, addressed to the QP; the caller writes the rest. */
    Packet request(int opcode, boolean ackReq, int psn) {
        Packet p = pool.acquire();
        new Bth().wrap(p.buffer, 0).write(opcode, false, 0, 0xFFFF, qp.qpn(), ackReq, psn);
        p.headerLength = Opcode.headerLength(opcode);
        p.srcGid = peerGid;
        p.dstGid = localGid;
        return p;
    }

    /** The completion already in the CQ, or null. */
    WorkCompletion pollNow() {
        WorkCompletion[] wc = WorkCompletion.array(1);
        return cq.poll(wc) == 1 ? wc[0] : null;
    }

    /** The next completion within 5 s of real time, or null. */
    WorkCompletion poll() {
        WorkCompletion[] wc = WorkCompletion.array(1);
        long end = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < end) {
            if (cq.poll(wc) == 1) {
                return wc[0];
            }
            Thread.onSpinWait();
        }
        return null;
    }

    /** The next completion, moving {@code clock} on by up to {@code timeoutMillis} to get it, or null. */
    WorkCompletion poll(FakeClock clock, long timeoutMillis) {
        WorkCompletion[] wc = WorkCompletion.array(1);
        for (long ms = 0; ms <= timeoutMillis; ms++) {
            if (cq.poll(wc) == 1) {
                return wc[0];
            }
            clock.advanceMillis(1);
        }
        return null;
    }

    @Override
    public void close() {
        try {
            qp.close();
            mr.close();
            cq.close();
            pd.close();
            ctx.close();
            arena.close();
        } finally {
            SoftDevices.remove(device);
        }
    }
}
