// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.verbs.*;

/**
 * The engine's tracing hook: with a JFR recording on, a forced retransmission, the NAK that caused
 * it and a QP that fails each leave their event; and rdma_sends counts completed SENDs. The peer is
 * played by hand: requests go to a link that swallows them, responses are injected.
 */
class EngineEventsTest {
    private static final int PEER_QPN = 0x99;

    private ScriptedPeer peer;
    private QueuePair qp;
    private AtomicInteger requests;

    @BeforeEach
    void setUp() {
        peer = new ScriptedPeer(SoftDevices.createLoopback("engine-events", new LoopbackFabric(), null),
                "::ffff:10.9.9.7", PEER_QPN);
        qp = peer.qp;
        requests = peer.requests;
    }

    @AfterEach
    void tearDown() {
        peer.close();
    }

    private void postSend() {
        peer.postSend(7);
    }

    private void acknowledge(int syndrome, int psn) {
        peer.acknowledge(psn, syndrome);
    }

    /** Runs {@code action} under a recording of the engine's events; returns what it recorded. */
    private static List<RecordedEvent> record(Runnable action) throws Exception {
        Path file = Files.createTempFile("rdma4j-engine", ".jfr");
        try (Recording r = new Recording()) {
            for (String name : List.of("Retransmit", "NakReceived", "NakSent", "QpError", "CqOverflow")) {
                r.enable("org.rdma4j.soft." + name);
            }
            r.start();
            action.run();
            r.stop();
            r.dump(file);
            return RecordingFile.readAllEvents(file);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static RecordedEvent only(List<RecordedEvent> events, String name) {
        List<RecordedEvent> of = events.stream().filter(e -> e.getEventType().getName().equals(name)).toList();
        assertEquals(1, of.size(), name + " in " + events);
        return of.get(0);
    }

    @Test
    void aSequenceNakRecordsTheNakAndTheRetransmissionItForces() throws Exception {
        List<RecordedEvent> events = record(() -> {
            postSend();
            acknowledge(Aeth.NAK_PSN_SEQ_ERR, 0); // the responder expected PSN 0: resend from there
        });
        assertTrue(requests.get() >= 2, "the SEND and its retransmission: " + requests.get());
        RecordedEvent nak = only(events, "org.rdma4j.soft.NakReceived");
        assertEquals(qp.qpn(), nak.getInt("qpn"));
        assertEquals(Aeth.NAK_PSN_SEQ_ERR, nak.getInt("syndrome"));
        assertEquals("PSN sequence error", nak.getString("nak"), "the syndrome by name");
        assertEquals("0x000000", nak.getString("psnHex"));
        // (the ACK timer, 67 ms, may add retransmissions of its own while the recording is stopped)
        List<RecordedEvent> byNak = events.stream()
                .filter(e -> e.getEventType().getName().equals("org.rdma4j.soft.Retransmit"))
                .filter(e -> "sequence NAK".equals(e.getString("cause"))).toList();
        assertEquals(1, byNak.size(), events.toString());
        RecordedEvent retransmit = byNak.get(0);
        assertEquals("engine-events", retransmit.getString("device"));
        assertEquals(qp.qpn(), retransmit.getInt("qpn"));
        assertEquals(0, retransmit.getInt("psn"));
        assertEquals("0x000000", retransmit.getString("psnHex"), "the PSN as packet traces show it");
        assertTrue(events.stream().noneMatch(e -> e.getEventType().getName().endsWith("QpError")), events.toString());
    }

    @Test
    void aRemoteAccessNakRecordsTheQpError() throws Exception {
        List<RecordedEvent> events = record(() -> {
            postSend();
            acknowledge(Aeth.NAK_REMOTE_ACCESS, 0);
            WorkCompletion wc = peer.poll();
            assertNotNull(wc, "no completion");
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status());
        });
        RecordedEvent error = only(events, "org.rdma4j.soft.QpError");
        assertEquals(qp.qpn(), error.getInt("qpn"));
        assertEquals("RTS", error.getString("fromState"));
    }

    @Test
    void rdmaSendsCountsEveryCompletedSend() {
        postSend();
        acknowledge(Aeth.ACK_CREDITS_INVALID, 0);
        WorkCompletion wc = peer.poll();
        assertEquals(WcStatus.SUCCESS, wc == null ? null : wc.status());
        assertEquals(1L, peer.ctx.counters(1).get("rdma_sends"));
    }
}
