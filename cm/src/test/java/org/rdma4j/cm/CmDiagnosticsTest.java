// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.logging.Level;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.verbs.Errno;

/**
 * What the connection manager tells an operator: log lines on {@code org.rdma4j.cm} and flight-recorder
 * events for connect, reject (with the reason by name, the peer's private data made printable) and a
 * peer that never answers.
 */
class CmDiagnosticsTest extends CmTestSupport {
    @BeforeAll
    static void devices() {
        setUpDevices("cmdiag");
    }

    @AfterAll
    static void removeDevices() {
        tearDownDevices();
    }

    @AfterEach
    void agentsGoWithTheirLastId() throws InterruptedException {
        awaitNoAgents();
    }

    /** Private data with an escape sequence and a CR LF that would forge a second log line. */
    private static final byte[] HOSTILE = text("go away\u001b[2J\r\nSEVERE: forged line");

    /** How the log lines and events write an address and port: IPv6 in brackets. */
    private static String hostPort(InetAddress a, int port) {
        String h = a.getHostAddress();
        return (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + port;
    }

    private interface Body {
        void run() throws Exception;
    }

    private static List<RecordedEvent> record(Body body) throws Exception {
        Path file = Files.createTempFile("rdma4j-cm", ".jfr");
        try (Recording r = new Recording()) {
            for (String name : List.of("Connect", "ConnectRequest", "Established", "Rejected", "Timeout",
                    "Disconnected")) {
                r.enable("org.rdma4j.cm." + name);
            }
            r.start();
            body.run();
            r.stop();
            r.dump(file);
            return RecordingFile.readAllEvents(file);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static List<RecordedEvent> of(List<RecordedEvent> events, String name, String peer) {
        return events.stream().filter(e -> e.getEventType().getName().equals("org.rdma4j.cm." + name))
                .filter(e -> peer.equals(e.getString("peer"))).toList();
    }

    /** The client connects to B:port and B rejects it with {@link #HOSTILE} private data. */
    private void connectAndGetRejected(int port) throws Exception {
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8);
            resolve(client, cch, ipB, port);
            try (Ep ce = new Ep(client)) {
                client.connect(new ConnParam());
                CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
                req.id().reject(HOSTILE);
                CmEvent rej = expect(cch, CmEventType.REJECTED);
                assertEquals(CmRej.REASON_CONSUMER_DEFINED, rej.status());
                req.id().close();
            }
        }
    }

    @Test
    void aRecordingOfARejectedConnectHoldsOneConnectAndOneRejectWithTheReasonByName() throws Exception {
        int port = port();
        String peer = hostPort(ipB, port);
        List<RecordedEvent> events = record(() -> connectAndGetRejected(port));
        assertEquals(1, of(events, "Connect", peer).size(), events.toString());
        List<RecordedEvent> rejects = of(events, "Rejected", peer);
        assertEquals(1, rejects.size(), events.toString());
        RecordedEvent rej = rejects.get(0);
        assertEquals(28, rej.getInt("reason"));
        assertEquals("consumer defined", rej.getString("reasonName"));
        assertEquals("go away?[2J??SEVERE: forged line", rej.getString("privateData"),
                "the peer's bytes, every control character as '?'");
        assertTrue(of(events, "Established", peer).isEmpty(), events.toString());
    }

    @Test
    void aRejectedConnectLogsTheReasonByNameAndThePeersPrivateDataWithoutItsControlCharacters() throws Exception {
        int port = port();
        try (CapturedLog log = new CapturedLog(CmLog.CATEGORY, Level.FINE)) {
            connectAndGetRejected(port);
            String peer = hostPort(ipB, port);
            List<String> connects = log.at(Level.FINE, "-> " + peer + ": REQ sent");
            assertEquals(1, connects.size(), log.messages());
            List<String> rejects = log.at(Level.FINE, "rejected by the peer: reason 28 (consumer defined)");
            assertEquals(1, rejects.size(), log.messages());
            String line = rejects.get(0);
            assertTrue(line.contains(peer), line);
            assertTrue(line.contains("\"go away?[2J??SEVERE: forged line\""), line);
            assertFalse(line.contains("\u001b") || line.contains("\r") || line.contains("\n"), line);
            assertTrue(log.at(Level.FINE, "reject (consumer defined) " + peer).size() == 1, log.messages());
        }
    }

    @Test
    void aSilentPeerLogsOneWarningPeerUnreachableAndRecordsOneTimeout() throws Exception {
        InetAddress silent = InetAddress.getByName("fd72:646d:6134:6a00::fffd");
        int port = 7175;
        String peer = hostPort(silent, port);
        try (CapturedLog log = new CapturedLog(CmLog.CATEGORY, Level.INFO)) {
            List<RecordedEvent> events = record(() -> {
                try (CmEventChannel cch = new CmEventChannel(); CmId client = cch.createId(PortSpace.TCP)) {
                    resolve(client, cch, silent, port);
                    try (Ep ce = new Ep(client)) {
                        client.connect(new ConnParam());
                        CmEvent e = expect(cch, CmEventType.UNREACHABLE);
                        assertEquals(-Errno.ETIMEDOUT, e.status());
                    }
                }
            });
            List<String> warnings = log.at(Level.WARNING, "peer unreachable: -ETIMEDOUT");
            assertEquals(1, warnings.size(), log.messages());
            assertTrue(warnings.get(0).contains("-> " + peer), warnings.get(0));
            List<RecordedEvent> timeouts = of(events, "Timeout", peer);
            assertEquals(1, timeouts.size(), events.toString());
            assertEquals("UNREACHABLE", timeouts.get(0).getString("event"));
            assertEquals(-Errno.ETIMEDOUT, timeouts.get(0).getInt("status"));
        }
    }

    @Test
    void aBurstOfMessagesThatMatchNoConnectionLogsOneWarningAMinuteWithTheCount() throws Exception {
        int port = port();
        CmLog.drops = new org.rdma4j.verbs.spi.LogRateLimit(java.util.concurrent.TimeUnit.MINUTES.toNanos(1));
        try (CapturedLog log = new CapturedLog(CmLog.CATEGORY, Level.INFO);
             CmEventChannel sch = new CmEventChannel(); CmId listener = sch.createId(PortSpace.TCP)) {
            listen(listener, ipB, port, 8); // B's CM runs: the forged REJs reach it
            long dropped = CmForgery.dropped();
            int burst = 20;
            for (int i = 0; i < burst; i++) {
                fabric.inject(gidB, gidA, CmForgery.rej(0x5eed + i, 0x1000 + i, CmRej.MSG_REP,
                        CmRej.REASON_CONSUMER_DEFINED, 0));
            }
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(WAIT_S);
            while (CmForgery.dropped() - dropped < burst) {
                assertTrue(System.nanoTime() - deadline < 0, "dropped " + (CmForgery.dropped() - dropped));
                Thread.sleep(1);
            }
            List<String> warnings = log.at(Level.WARNING, "CM message(s) dropped since the last report");
            assertEquals(1, warnings.size(), log.messages());
            assertTrue(warnings.get(0).startsWith("1 CM message(s)"), warnings.get(0));
            assertTrue(warnings.get(0).contains("the last: REJ on cmdiagB port 1"), warnings.get(0));
        } finally {
            CmLog.drops = new org.rdma4j.verbs.spi.LogRateLimit(java.util.concurrent.TimeUnit.MINUTES.toNanos(1));
        }
    }
}
