// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.CmProvider;

/** Multicast on an id whose device has a connection manager of its own (librdmacm): calls and rdma_ud_param. */
class CmMulticastProviderTest {
    @Test
    void joinAndLeaveGoToTheProviderAndItsUdParametersReachTheEvent() throws Exception {
        ProviderCmIdTest.FakeProvider provider = new ProviderCmIdTest.FakeProvider();
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.UDP);
             CmId tcp = ch.createId(PortSpace.TCP)) {
            assertNotNull(ProviderCmId.attach(id, provider));
            assertEquals(0x0111, provider.lastPortSpace);
            ProviderCmIdTest.FakeId f = provider.made.get(0);
            InetAddress g = InetAddress.getByName("239.5.5.5");
            Object ctx = "node 0";
            id.joinMulticast(g, ctx);
            id.joinMulticast(InetAddress.getByName("239.5.5.6"), MulticastJoinFlag.SEND_ONLY_FULL_MEMBER, null);
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                    () -> id.joinMulticast(InetAddress.getByName("10.0.0.1"), null)).errno());
            assertEquals(List.of("join 239.5.5.5", "join 239.5.5.6 send-only"), f.calls);

            AhAttr ah = new AhAttr(new GlobalRoute(Gid.of(g), 0, 1, 64, 0), 0, 0, 0, 0, 1);
            f.listener.onEvent(new CmProvider.Event(12, 0, f, null, new byte[0], null,
                    new CmProvider.Ud(ah, 0xFFFFFF, CmId.UDP_QKEY, ctx)));
            CmEvent e = ch.getEvent(0, TimeUnit.SECONDS);
            assertEquals(CmEventType.MULTICAST_JOIN, e.type());
            assertSame(id, e.id());
            assertEquals(ah, e.ahAttr());
            assertEquals(CmId.UDP_QKEY, e.qkey());
            assertEquals(0xFFFFFF, e.param().qpNum());
            assertSame(ctx, e.context());
            e.ack();
            f.listener.onEvent(new CmProvider.Event(13, -Errno.ENOMEM, f, null, new byte[0], null,
                    new CmProvider.Ud(null, 0, 0, "other")));
            e = ch.getEvent(0, TimeUnit.SECONDS);
            assertEquals(CmEventType.MULTICAST_ERROR, e.type());
            assertEquals(-Errno.ENOMEM, e.status());
            assertNull(e.ahAttr());
            assertEquals("other", e.context());
            e.ack();

            id.leaveMulticast(g);
            assertEquals("leave 239.5.5.5", f.calls.get(f.calls.size() - 1));

            assertNotNull(ProviderCmId.attach(tcp, provider));
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> tcp.joinMulticast(g, null)).errno(),
                    "an RC id joins nothing");
            assertEquals(List.of(), provider.made.get(1).calls, "the TCP id's provider saw no join");
        }
    }
}
