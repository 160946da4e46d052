// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The connection manager's front door as the README shows it: a server accepting in a thread and a
 * client in one JVM on a loopback address no device had, the soft device made by the default options.
 */
class CmFrontDoorTest {
    static final String ADDR = "127.0.0.211";

    @BeforeAll
    static void port() throws Exception {
        CmEngine.INSTANCE.opener = GsiOpener.PROVIDER;
        LocalDevices.udpPort = SoftDevices.freeUdpPort(31_000, InetAddress.getByName(ADDR),
                InetAddress.getByName("127.0.0.212"), InetAddress.getByName("127.0.0.213"),
                InetAddress.getByName("127.0.0.214"));
    }

    @AfterAll
    static void back() {
        LocalDevices.udpPort = 0;
    }

    @Test
    void aClientWhoseRouteSourcesRocePortAnotherProcessHoldsMovesToTheNextLoopbackAddress() throws Exception {
        // the host's route to the server leaves from 127.0.0.212, whose RoCE port "another JVM" holds
        InetAddress routeSource = InetAddress.getByName("127.0.0.212");
        SourceRoute.Router kernel = SourceRoute.router;
        SourceRoute.router = dst -> routeSource;
        try (java.net.DatagramSocket otherJvm = new java.net.DatagramSocket(
                new InetSocketAddress(routeSource, LocalDevices.udpPort))) {
            org.rdma4j.verbs.VerbsException e = org.junit.jupiter.api.Assertions.assertThrows(
                    org.rdma4j.verbs.VerbsException.class, () -> RdmaClient.connect(new InetSocketAddress("127.0.0.214",
                            7471), new EndpointOptions().timeout(java.time.Duration.ofMillis(300))));
            // nobody serves 127.0.0.214: the point is where the client came from
            assertTrue(e.getMessage().matches("ETIMEDOUT: connect to 127\\.0\\.0\\.214:7471 \\(local 127\\.0\\.0\\.213:"
                    + "[0-9]+\\): no ESTABLISHED within 300 ms .*"), e::getMessage);
        } finally {
            SourceRoute.router = kernel;
        }
    }

    @Test
    void aServerThreadAndAClientInOneJvmConnectOnALoopbackAddressNoDeviceHad() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Arena arena = Arena.ofShared();
             RdmaServer server = RdmaServer.listen(new InetSocketAddress(ADDR, 7471), new EndpointOptions())) {
            MemorySegment buf = arena.allocate(4096);
            Future<Byte> got = pool.submit(() -> {
                try (Endpoint conn = server.accept(ep -> ep.postRecv(1, buf, ep.regMsgs(buf)))) {
                    WorkCompletion wc = new WorkCompletion();
                    conn.getRecvComp(wc);
                    assertEquals(WcStatus.SUCCESS, wc.status());
                    return buf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0);
                }
            });
            try (Endpoint conn = RdmaClient.connect(ADDR, 7471)) {
                MemorySegment msg = arena.allocate(64).fill((byte) 'x');
                conn.postSend(2, msg, conn.regMsgs(msg), SendFlag.SIGNALED);
                WorkCompletion wc = new WorkCompletion();
                conn.getSendComp(wc);
                assertEquals(WcStatus.SUCCESS, wc.status());
            }
            assertEquals((byte) 'x', got.get(20, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
    }
}
