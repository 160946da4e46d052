package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
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
 * The engine's tracing hook: with a JFR recording on, a forced retransmission, the NAK that caused
 * it and a QP that fails each leave their event; and rdma_sends counts completed SENDs. The peer is
 * played by hand: requests go to a link that swallows them, responses are injected.
 */
class EngineEventsTest {
    private static final int PEER_QPN = 0x99;

    private final AtomicInteger requests = new AtomicInteger();
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
        device = SoftDevices.createLoopback("engine-events", new LoopbackFabric(), null);
        hca = ((SoftDevice) device).hca;
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
        ReceivePathFuzzTest.Connect.bringUp(qp, QpType.RC, peerGid, PEER_QPN);
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
        qp.postSend(new SendWorkRequest().wrId(7).opcode(WrOpcode.SEND).sge(mr, 0, 16).flags(SendFlag.SIGNALED));
    }

    private void acknowledge(int syndrome, int psn) {
        Packet p = new PacketPool().acquire();
        new Bth().wrap(p.buffer, 0).write(Opcode.RC_ACKNOWLEDGE, false, 0, 0xFFFF, qp.qpn(), false, psn);
        new Aeth().wrap(p.buffer, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE, Opcode.HEADER_AETH)).write(syndrome, 1);
        p.headerLength = Opcode.headerLength(Opcode.RC_ACKNOWLEDGE);
        p.srcGid = peerGid;
        p.dstGid = ctx.queryGid(1, 1);
        hca.receive(p);
    }

    private WorkCompletion poll() {
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
        // (the ACK timer, 67 ms, may add retransmissions of its own while the recording is stopped)
        List<RecordedEvent> byNak = events.stream()
                .filter(e -> e.getEventType().getName().equals("org.rdma4j.soft.Retransmit"))
                .filter(e -> "sequence NAK".equals(e.getString("cause"))).toList();
        assertEquals(1, byNak.size(), events.toString());
        RecordedEvent retransmit = byNak.get(0);
        assertEquals("engine-events", retransmit.getString("device"));
        assertEquals(qp.qpn(), retransmit.getInt("qpn"));
        assertEquals(0, retransmit.getInt("psn"));
        assertTrue(events.stream().noneMatch(e -> e.getEventType().getName().endsWith("QpError")), events.toString());
    }

    @Test
    void aRemoteAccessNakRecordsTheQpError() throws Exception {
        List<RecordedEvent> events = record(() -> {
            postSend();
            acknowledge(Aeth.NAK_REMOTE_ACCESS, 0);
            WorkCompletion wc = poll();
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
        WorkCompletion wc = poll();
        assertEquals(WcStatus.SUCCESS, wc == null ? null : wc.status());
        assertEquals(1L, ctx.counters(1).get("rdma_sends"));
    }
}
