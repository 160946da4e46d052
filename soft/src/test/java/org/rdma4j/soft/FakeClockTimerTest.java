package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
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
import org.rdma4j.soft.wire.RnrTimer;
import org.rdma4j.verbs.*;

/**
 * The RC timers on a fake clock: the ACK timeout retransmits exactly when it expires and not before,
 * retries run out into RETRY_EXC_ERR, an RNR NAK waits its timer before the resend and RNR retries run
 * out into RNR_RETRY_EXC_ERR; a QP with nothing outstanding has no timer queued. The peer is this
 * test: it counts the requests the QP sends and answers by hand.
 */
class FakeClockTimerTest {
    private static final int PEER_QPN = 0x77;
    private static final int TIMEOUT = 14; // 4.096 us * 2^14 = 67.1 ms
    private static final long TIMEOUT_NS = RnrTimer.ackTimeoutNanos(TIMEOUT);
    private static final int RETRY_CNT = 2;
    private static final int RNR_RETRY = 2;
    private static final int RNR_CODE = 14; // 1.92 ms

    private final AtomicInteger requests = new AtomicInteger();
    private final FakeClock clock = new FakeClock();
    private Device device;
    private Hca hca;
    private Context ctx;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private MemoryRegion mr;
    private Arena arena;
    private Gid peerGid;

    @BeforeEach
    void setUp() {
        device = SoftDevices.createOnClock("fake-clock-timers", new LoopbackFabric(), clock);
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
        });
        ctx = device.open();
        pd = ctx.allocPd();
        cq = ctx.createCq(16);
        qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(4, 4, 1, 1, 0)));
        peerGid = Gid.parse("::ffff:10.9.9.7");
        qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(0),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        qp.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.MTU_1024).destQpNum(PEER_QPN).rqPsn(0)
                        .ahAttr(AhAttr.roce(peerGid, 1)).maxDestRdAtomic(1).minRnrTimer(1),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        qp.modify(new QpAttr().state(QpState.RTS).sqPsn(0).timeout(TIMEOUT).retryCnt(RETRY_CNT)
                        .rnrRetry(RNR_RETRY).maxRdAtomic(1),
                QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT
                        | QpAttrMask.RNR_RETRY | QpAttrMask.MAX_QP_RD_ATOMIC);
        arena = Arena.ofShared();
        mr = pd.regMr(arena.allocate(64, 8), Access.LOCAL_WRITE);
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
        qp.postSend(new SendWorkRequest().wrId(9).opcode(WrOpcode.SEND).sge(mr, 0, 16).flags(SendFlag.SIGNALED));
    }

    /** An ACK (or NAK) for {@code psn} from the peer, with AETH syndrome {@code syndrome}. */
    private void answer(int psn, int syndrome) {
        Packet p = new PacketPool().acquire();
        new Bth().wrap(p.buffer, 0).write(Opcode.RC_ACKNOWLEDGE, false, 0, 0xFFFF, qp.qpn(), false, psn);
        new Aeth().wrap(p.buffer, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE, Opcode.HEADER_AETH)).write(syndrome, 1);
        p.headerLength = Opcode.headerLength(Opcode.RC_ACKNOWLEDGE);
        p.srcGid = peerGid;
        p.dstGid = ctx.queryGid(1, 1);
        hca.receive(p);
    }

    private WorkCompletion pollNow() {
        WorkCompletion[] wc = WorkCompletion.array(1);
        return cq.poll(wc) == 1 ? wc[0] : null;
    }

    @Test
    void ackTimeoutRetransmitsWhenItExpiresAndNotBefore() {
        postSend();
        assertEquals(1, requests.get());
        assertEquals(1, hca.timersQueued(), "the ACK timer is queued");
        clock.advance(TIMEOUT_NS - 1_000, 1_000_000);
        assertEquals(1, requests.get(), "no retransmission before the timeout");
        clock.advance(2_000, 1_000);
        assertEquals(2, requests.get(), "one retransmission at the timeout");
        assertEquals(1L, ctx.counters(1).get("completer_retry_err"));
        answer(0, Aeth.ACK_CREDITS_INVALID);
        WorkCompletion wc = pollNow();
        assertEquals(WcStatus.SUCCESS, wc == null ? null : wc.status());
        clock.advance(TIMEOUT_NS * 3, 1_000_000);
        assertEquals(2, requests.get(), "nothing more once acknowledged");
        assertEquals(0, hca.timersQueued(), "a QP with nothing outstanding has no timer");
    }

    @Test
    void retriesRunOutIntoRetryExceeded() {
        postSend();
        for (int expiry = 1; expiry <= RETRY_CNT; expiry++) {
            clock.advance(TIMEOUT_NS + 1_000, 1_000_000);
            assertEquals(1 + expiry, requests.get(), "retransmission " + expiry);
            assertNull(pollNow(), "no completion while retries remain");
        }
        clock.advance(TIMEOUT_NS + 1_000, 1_000_000);
        WorkCompletion wc = pollNow();
        assertEquals(WcStatus.RETRY_EXC_ERR, wc == null ? null : wc.status());
        assertEquals(1 + RETRY_CNT, requests.get(), "the first send and " + RETRY_CNT + " retransmissions");
        assertEquals(QpState.ERR, qp.query(new QpAttr()).qpState);
        assertEquals(0, hca.timersQueued());
    }

    @Test
    void rnrNakWaitsItsTimerThenResendsUntilRnrRetriesRunOut() {
        long rnrNs = RnrTimer.nanos(RNR_CODE);
        postSend();
        for (int nak = 1; nak <= RNR_RETRY; nak++) {
            answer(0, Aeth.RNR_NAK | RNR_CODE);
            clock.advance(rnrNs - 1_000, 10_000);
            assertEquals(nak, requests.get(), "no resend before the RNR timer (NAK " + nak + ")");
            clock.advance(2_000, 1_000);
            assertEquals(nak + 1, requests.get(), "resent once the RNR timer expired (NAK " + nak + ")");
            assertNull(pollNow());
        }
        answer(0, Aeth.RNR_NAK | RNR_CODE);
        clock.advance(rnrNs * 2, 10_000);
        WorkCompletion wc = pollNow();
        assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wc == null ? null : wc.status());
        assertEquals(1 + RNR_RETRY, requests.get());
    }

    @Test
    void anIdleDeviceHasNothingForItsProgressAgent() {
        for (int i = 0; i < 100; i++) {
            pd.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(1, 1, 1, 1, 0))).close();
        }
        assertEquals(0, hca.timersQueued());
        assertEquals(0, hca.progressAgent().doWork(), "no QP visited");
    }
}
