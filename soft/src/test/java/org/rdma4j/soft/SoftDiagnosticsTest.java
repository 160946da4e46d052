// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.logging.Level;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.PortCounters;
import org.rdma4j.verbs.PortCountersJmx;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * What the soft device tells an operator: a QP that gives up on its peer logs one WARNING on
 * {@code org.rdma4j.soft} naming the QP and the peer; a port going down logs a WARNING; a device up is
 * a DEBUG line; and the port counters read the same through the map, the typed view and JMX.
 */
class SoftDiagnosticsTest {
    private static final String PEER = "::ffff:10.9.9.7";
    private static final int PEER_QPN = 0x99;

    private static ScriptedPeer peer(String name, int retryCnt, int rnrRetry) {
        return new ScriptedPeer(SoftDevices.createLoopback(name, new LoopbackFabric(), null), PEER, PEER_QPN,
                new ScriptedPeer.Options().retries(retryCnt, rnrRetry));
    }

    @Test
    void aQpWhoseTransportRetriesAreExhaustedLogsOneWarningNamingTheQpnAndThePeer() {
        try (CapturedLog log = new CapturedLog(SoftLog.CATEGORY, Level.INFO); ScriptedPeer p = peer("diag-retry", 0, 7)) {
            p.postSend(1);
            p.acknowledge(0, Aeth.NAK_PSN_SEQ_ERR); // with retry_cnt 0 a sequence NAK ends the SEND
            WorkCompletion wc = p.poll();
            assertNotNull(wc, "no completion");
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
            p.postSend(2); // flushed: the QP is in the error state, nothing more to say
            assertNotNull(p.poll(), "the flushed SEND");
            List<String> warnings = log.at(Level.WARNING, "");
            assertEquals(1, warnings.size(), log.messages());
            String line = warnings.get(0);
            String qpn = "QP 0x" + Integer.toHexString(p.qp.qpn());
            for (String part : List.of("diag-retry: " + qpn, "peer 10.9.9.7 QP 0x99", "transport retries exhausted",
                    "retry_cnt 0", "PSN 0x000000", "RETRY_EXC_ERR")) {
                assertTrue(line.contains(part), part + " in " + line);
            }
        }
    }

    @Test
    void aQpWhoseRnrRetriesAreExhaustedLogsOneWarningSayingSo() {
        try (CapturedLog log = new CapturedLog(SoftLog.CATEGORY, Level.INFO); ScriptedPeer p = peer("diag-rnr", 7, 0)) {
            p.postSend(1);
            p.acknowledge(0, Aeth.RNR_NAK | 1);
            WorkCompletion wc = p.poll();
            assertNotNull(wc, "no completion");
            assertEquals(WcStatus.RNR_RETRY_EXC_ERR, wc.status());
            List<String> warnings = log.at(Level.WARNING, "RNR retries exhausted (rnr_retry 0)");
            assertEquals(1, warnings.size(), log.messages());
            assertTrue(warnings.get(0).contains("peer 10.9.9.7 QP 0x99"), warnings.get(0));
        }
    }

    @Test
    void aRemoteAccessErrorIsNoWarning() {
        try (CapturedLog log = new CapturedLog(SoftLog.CATEGORY, Level.INFO); ScriptedPeer p = peer("diag-access", 7, 7)) {
            p.postSend(1);
            p.acknowledge(0, Aeth.NAK_REMOTE_ACCESS); // the program's error, told by its completion
            assertEquals(WcStatus.REM_ACCESS_ERR, p.poll().status());
            assertEquals("", log.messages());
        }
    }

    @Test
    void aDeviceUpIsADebugLineAndItsPortGoingDownAWarning() {
        try (CapturedLog log = new CapturedLog(SoftLog.CATEGORY, Level.FINE)) {
            var device = SoftDevices.createLoopback("diag-port", new LoopbackFabric(), null);
            try {
                assertEquals(1, log.at(Level.FINE, "soft device diag-port up: link ").size(), log.messages());
                SoftDevices.setPortState("diag-port", 1, false);
                assertEquals(1, log.at(Level.WARNING, "soft device diag-port port 1 down").size(), log.messages());
                SoftDevices.setPortState("diag-port", 1, false); // no change, no line
                SoftDevices.setPortState("diag-port", 1, true);
                assertEquals(1, log.at(Level.WARNING, "").size(), log.messages());
                assertEquals(1, log.at(Level.FINE, "soft device diag-port port 1 up").size(), log.messages());
            } finally {
                SoftDevices.remove(device);
            }
        }
    }

    @Test
    void thePortCountersReadTheSameThroughTheMapTheTypedViewAndJmx() throws Exception {
        try (ScriptedPeer p = peer("diag-counters", 7, 7)) {
            p.postSend(1);
            p.acknowledge(0, Aeth.NAK_PSN_SEQ_ERR); // one retransmission
            p.ack(0);
            assertEquals(WcStatus.SUCCESS, p.poll().status());
            PortCounters c = p.ctx.portCounters(1);
            assertEquals(1, c.traffic().sends());
            assertEquals(p.ctx.counters(1).get("rdma_sends"), c.traffic().sends());
            assertEquals(p.ctx.counters(1).get("rcvd_seq_err"), c.retries().receivedSequenceNaks());
            assertEquals(1, c.retries().receivedSequenceNaks());
            assertTrue(c.retries().retransmits() >= 1, c.toString());
            assertEquals(0, c.retries().retryExceeded());
            assertEquals(PortCounters.ABSENT, c.get("no_such_counter"));
            assertEquals(c.all().get("sent_pkts"), c.traffic().sentPackets());

            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName("org.rdma4j:type=PortCounters,device=diag-counters,port=1");
            assertFalse(server.isRegistered(name));
            try (AutoCloseable registration = PortCountersJmx.register(p.ctx, 1)) {
                assertTrue(server.isRegistered(name));
                assertEquals(1L, server.getAttribute(name, "Sends"));
                assertEquals(1L, server.getAttribute(name, "ReceivedSequenceNaks"));
                assertEquals(0L, server.getAttribute(name, "RetryExceeded"));
                assertEquals("diag-counters", server.getAttribute(name, "Device"));
                TabularData all = (TabularData) server.getAttribute(name, "Counters");
                CompositeData row = all.get(new Object[] {"rdma_sends"});
                assertNotNull(row, all.keySet().toString());
                assertEquals(1L, row.get("value"));
                VerbsException twice = assertThrows(VerbsException.class, () -> PortCountersJmx.register(p.ctx, 1));
                assertEquals(Errno.EEXIST, twice.errno());
            }
            assertFalse(server.isRegistered(name), "closing the registration unregisters it");
            assertThrows(VerbsException.class, () -> PortCountersJmx.register(p.ctx, 2), "no port 2");
        }
    }
}
