// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/** IPv4: two soft devices speaking RoCEv2 over UDP on loopback addresses; rdma_cm's header in its IPv4 form. */
class CmIpv4UdpTest extends CmTestSupport {
    @BeforeAll
    static void devices() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.61");
        InetAddress b = InetAddress.getByName("127.0.0.62");
        int udp = SoftDevices.freeUdpPort(26_000, a, b);
        setUpDevices("soft:udp?name=cm4A&addr=127.0.0.61&port=" + udp,
                "soft:udp?name=cm4B&addr=127.0.0.62&port=" + udp);
    }

    @AfterAll
    static void removeDevices() {
        tearDownDevices();
    }

    @AfterEach
    void agentsGoWithTheirLastId() throws InterruptedException {
        awaitNoAgents();
    }

    @Test
    void anIpv4ConnectionCarriesItsAddressesAndASend() throws Exception {
        assertTrue(gidA.isIpv4Mapped(), "a UDP device on an IPv4 address has the ::ffff: GID");
        int port = port();
        try (CmEventChannel sch = new CmEventChannel(); CmEventChannel cch = new CmEventChannel();
             CmId listener = sch.createId(PortSpace.TCP); CmId client = cch.createId(PortSpace.TCP)) {
            quick(listener);
            listener.bindAddr(new InetSocketAddress("0.0.0.0", port)); // a wildcard listener
            listener.listen(4);
            quick(client);
            client.resolveAddr(null, new InetSocketAddress(ipB, port), 1000); // the source is chosen: the GID nearest B
            expect(cch, CmEventType.ADDR_RESOLVED);
            client.resolveRoute(1000);
            expect(cch, CmEventType.ROUTE_RESOLVED);
            Ep ce = new Ep(client);
            client.connect(new ConnParam().privateData(text("v4")));
            CmEvent req = expect(sch, CmEventType.CONNECT_REQUEST);
            assertEquals("v4", prefix(req.privateData(), 2));
            CmId child = req.id();
            assertInstanceOf(Inet4Address.class, child.remoteAddress().getAddress());
            assertEquals(new InetSocketAddress(client.localAddress().getAddress(), client.localAddress().getPort()),
                    child.remoteAddress());
            assertEquals(new InetSocketAddress(ipB, port), child.localAddress());
            Ep se = new Ep(child);
            se.qp.postRecv(new RecvWorkRequest().wrId(3).sge(se.mr, 0, 64));
            child.accept(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            expect(sch, CmEventType.ESTABLISHED);
            ce.mr.segment().setString(0, "over udp", java.nio.charset.StandardCharsets.US_ASCII);
            ce.qp.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                    .sge(ce.mr, 0, 9));
            assertEquals(WcStatus.SUCCESS, ce.poll().status());
            assertEquals(WcStatus.SUCCESS, se.poll().status());
            assertEquals("over udp", se.mr.segment().getString(0, java.nio.charset.StandardCharsets.US_ASCII));
            client.disconnect();
            expect(sch, CmEventType.DISCONNECTED);
            child.disconnect();
            expect(cch, CmEventType.DISCONNECTED);
            ce.close();
            se.close();
            child.close();
        }
    }
}
