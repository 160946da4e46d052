// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.link.LoopbackFabric;
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

    private volatile boolean backlogged;
    private final FakeClock clock = new FakeClock();
    private ScriptedPeer peer;
    private AtomicInteger requests;
    private Context ctx;

    @BeforeEach
    void setUp() {
        Device device = SoftDevices.createOnClock("backlog-timer", new LoopbackFabric(), clock);
        clock.drive(((SoftDevice) device).hca.progressAgent());
        peer = new ScriptedPeer(device, "::ffff:10.9.9.8", PEER_QPN,
                new ScriptedPeer.Options().backlogged(() -> backlogged)); // timeout 14 (67 ms), 7 retries
        requests = peer.requests;
        ctx = peer.ctx;
    }

    @AfterEach
    void tearDown() {
        peer.close();
    }

    private void postSend() {
        peer.postSend(7);
    }

    private void ack(int psn) {
        peer.ack(psn);
    }

    /** The next completion, moving the fake clock on by up to {@code timeoutMillis} to get it. */
    private WorkCompletion poll(long timeoutMillis) {
        return peer.poll(clock, timeoutMillis);
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
