package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.link.Packet;
import org.rdma4j.soft.link.PacketPool;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.*;

/**
 * The local ACK timeout does not count while the device's link reports a receive backlog (the ACK
 * may be among the packets not yet taken in): no retransmission, no retry used; an ACK that then
 * arrives completes the send. The putting off is bounded, so a silent peer still ends in
 * RETRY_EXC_ERR. Without a backlog the same silence retransmits, as before. Time is a fake clock
 * the test moves (the device runs no progress thread), so nothing here waits for real timeouts.
 */
class BacklogDeferredTimeoutTest {
    private static final int PEER_QPN = 0x99;

    private final AtomicInteger requests = new AtomicInteger();
    private volatile boolean backlogged;
    private Device device;
    private Hca hca;
    private Context ctx;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private MemoryRegion mr;
    private Arena arena;
    private Gid peerGid;
    private final FakeClock clock = new FakeClock();

    @BeforeEach
    void setUp() {
        device = SoftDevices.createOnClock("backlog-timer", new LoopbackFabric(), clock);
        hca = ((SoftDevice) device).hca;
        clock.drive(hca.progressAgent());
        hca.setLink(new Link() {
            @Override
            public void send(Packet p) {
                if (!Opcode.isResponse(new Bth().wrap(p.buffer, 0).opcode())) {
                    requests.incrementAndGet();
                }
                p.release();
            }

            @Override
            public boolean receiveBacklogged() {
                return backlogged;
            }
        });
        ctx = device.open();
        pd = ctx.allocPd();
        cq = ctx.createCq(16);
        qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(4, 4, 1, 1, 0)));
        peerGid = Gid.parse("::ffff:10.9.9.8");
        ReceivePathFuzzTest.Connect.bringUp(qp, QpType.RC, peerGid, PEER_QPN); // timeout 14 (67 ms), 7 retries
        arena = Arena.ofShared();
        MemorySegment buf = arena.allocate(64, 8);
        mr = pd.regMr(buf, Access.LOCAL_WRITE);
    }

    @AfterEach
    void tearDown() {
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

    private void postSend() {
        qp.postSend(new SendWorkRequest().wrId(7).opcode(WrOpcode.SEND).sge(mr, 0, 16).flags(SendFlag.SIGNALED));
    }

    private void ack(int psn) {
        Packet p = new PacketPool().acquire();
        new Bth().wrap(p.buffer, 0).write(Opcode.RC_ACKNOWLEDGE, false, 0, 0xFFFF, qp.qpn(), false, psn);
        new Aeth().wrap(p.buffer, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE, Opcode.HEADER_AETH))
                .write(Aeth.ACK_CREDITS_INVALID, 1);
        p.headerLength = Opcode.headerLength(Opcode.RC_ACKNOWLEDGE);
        p.srcGid = peerGid;
        p.dstGid = ctx.queryGid(1, 1);
        hca.receive(p);
    }

    /** The next completion, moving the fake clock on by up to {@code timeoutMillis} to get it. */
    private WorkCompletion poll(long timeoutMillis) {
        WorkCompletion[] wc = WorkCompletion.array(1);
        for (long ms = 0; ms <= timeoutMillis; ms++) {
            if (cq.poll(wc) == 1) {
                return wc[0];
            }
            clock.advanceMillis(1);
        }
        return null;
    }

    @Test
    void whileTheReceivePathIsBehindAnExpiredTimerNeitherRetransmitsNorUsesARetry() {
        backlogged = true;
        postSend();
        clock.advanceMillis(250); // more than 3 timeout periods, less than the 8 the timer may be put off
        assertEquals(1, requests.get(), "no retransmission while backlogged");
        assertEquals(0L, ctx.counters(1).get("completer_retry_err"), "no retry used");
        assertTrue(ctx.counters(1).get("ack_timeout_deferred") >= 1, ctx.counters(1).toString());
        ack(0); // the receive thread reaches the ACK that was waiting in the backlog (sq_psn 0) ...
        backlogged = false; // ... and catches up
        WorkCompletion wc = poll(2_000);
        assertEquals(WcStatus.SUCCESS, wc == null ? null : wc.status());
        assertEquals(1, requests.get());
    }

    @Test
    void withoutABacklogTheSameSilenceRetransmits() {
        postSend();
        clock.advanceMillis(250);
        assertTrue(requests.get() >= 2, "retransmitted: " + requests.get());
        assertTrue(ctx.counters(1).get("completer_retry_err") >= 1);
        assertEquals(0L, ctx.counters(1).get("ack_timeout_deferred"));
    }

    @Test
    void aBacklogThatNeverClearsStillEndsInRetryExceeded() {
        backlogged = true;
        postSend();
        // 8 expiries (first try + 7 retries), each put off for at most 8 periods of 67 ms: < 5 s.
        WorkCompletion wc = poll(20_000);
        assertEquals(WcStatus.RETRY_EXC_ERR, wc == null ? null : wc.status());
        assertEquals(8, requests.get(), "the first send and 7 retransmissions");
    }
}
