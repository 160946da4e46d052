// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.wire.Aeth;
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

    private final FakeClock clock = new FakeClock();
    private ScriptedPeer peer;
    private Hca hca;
    private AtomicInteger requests;

    @BeforeEach
    void setUp() {
        Device device = SoftDevices.createOnClock("fake-clock-timers", new LoopbackFabric(), clock);
        clock.drive(((SoftDevice) device).hca.progressAgent());
        peer = new ScriptedPeer(device, "::ffff:10.9.9.7", PEER_QPN,
                new ScriptedPeer.Options().retries(RETRY_CNT, RNR_RETRY)); // timeout 14 (67 ms)
        hca = peer.hca;
        requests = peer.requests;
    }

    @AfterEach
    void tearDown() {
        peer.close();
    }

    private void postSend() {
        peer.postSend(9);
    }

    private void answer(int psn, int syndrome) {
        peer.acknowledge(psn, syndrome);
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
        assertEquals(1L, peer.ctx.counters(1).get("completer_retry_err"));
        answer(0, Aeth.ACK_CREDITS_INVALID);
        WorkCompletion wc = peer.pollNow();
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
            assertNull(peer.pollNow(), "no completion while retries remain");
        }
        clock.advance(TIMEOUT_NS + 1_000, 1_000_000);
        WorkCompletion wc = peer.pollNow();
        assertEquals(WcStatus.RETRY_EXC_ERR, wc == null ? null : wc.status());
        assertEquals(1 + RETRY_CNT, requests.get(), "the first send and " + RETRY_CNT + " retransmissions");
        assertEquals(QpState.ERR, peer.qp.query(new QpAttr()).qpState);
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
            assertNull(peer.pollNow());
        }
        answer(0, Aeth.RNR_NAK | RNR_CODE);
        clock.advance(rnrNs * 2, 10_000);
        WorkCompletion wc = peer.pollNow();
        assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wc == null ? null : wc.status());
        assertEquals(1 + RNR_RETRY, requests.get());
    }

    @Test
    void anIdleDeviceHasNothingForItsProgressAgent() {
        for (int i = 0; i < 100; i++) {
            peer.pd.createQp(new QpInitAttr(QpType.RC, peer.cq, peer.cq).cap(new QpCap(1, 1, 1, 1, 0))).close();
        }
        assertEquals(0, hca.timersQueued());
        assertEquals(0, hca.progressAgent().doWork(), "no QP visited");
    }
}
