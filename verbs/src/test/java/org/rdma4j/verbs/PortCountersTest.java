// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The typed view of a counter map: rxe's names, a NIC's names, and -1 for what a device does not keep. */
class PortCountersTest {
    @Test
    void rxeNamesFillTheGroupsAndEveryDropCounterAddsToTheTotal() {
        Map<String, Long> m = new HashMap<>();
        m.put("sent_pkts", 10L);
        m.put("rcvd_pkts", 9L);
        m.put("rdma_sends", 4L);
        m.put("retry_exceeded_err", 1L);
        m.put("rcvd_seq_err", 2L);
        m.put("icrc_err_drops", 3L);
        m.put("unknown_qpn_drops", 5L);
        PortCounters c = PortCounters.of(m);
        assertEquals(10, c.traffic().sentPackets());
        assertEquals(9, c.traffic().receivedPackets());
        assertEquals(4, c.traffic().sends());
        assertEquals(1, c.retries().retryExceeded());
        assertEquals(2, c.retries().receivedSequenceNaks());
        assertEquals(3, c.drops().icrc());
        assertEquals(8, c.drops().total());
        assertEquals(PortCounters.ABSENT, c.retries().retransmits(), "not kept: -1, never 0");
        assertEquals(PortCounters.ABSENT, c.traffic().receives());
        assertEquals(m, c.all());
        assertThrows(UnsupportedOperationException.class, () -> c.all().put("x", 1L));
    }

    @Test
    void aNicsPortCountersAndMlx5NamesStandInWhereTheyMeanTheSame() {
        PortCounters c = PortCounters.of(Map.of("port_xmit_packets", 7L, "port_rcv_packets", 6L,
                "rnr_nak_retry_err", 2L, "out_of_sequence", 3L, "packet_seq_err", 4L));
        assertEquals(7, c.traffic().sentPackets());
        assertEquals(6, c.traffic().receivedPackets());
        assertEquals(2, c.retries().rnrRetryExceeded());
        assertEquals(3, c.retries().outOfSequenceRequests());
        assertEquals(4, c.retries().receivedSequenceNaks());
        assertEquals(PortCounters.ABSENT, c.drops().total(), "no _drops counters at all");
    }

    @Test
    void theJmxNameQuotesADeviceNameWithCharactersJmxReserves() throws Exception {
        javax.management.ObjectName n = PortCountersJmx.objectName("soft0", 1);
        assertEquals("org.rdma4j", n.getDomain());
        assertEquals("PortCounters", n.getKeyProperty("type"));
        assertEquals("soft0", n.getKeyProperty("device"));
        assertEquals("1", n.getKeyProperty("port"));
        assertEquals("\"a,b=c\"", PortCountersJmx.objectName("a,b=c", 1).getKeyProperty("device"));
    }
}
