// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * A peer in a second JVM, over UDP, killed (SIGKILL) after the connection is ESTABLISHED: outstanding
 * work completes (the SEND with RETRY_EXC_ERR, the receive flushed) and a disconnect ends in
 * DISCONNECTED with ETIMEDOUT, all within the configured timeouts.
 */
class CmKilledPeerTest extends CmTestSupport {
    private static Device dev;
    private static int roce;

    @BeforeAll
    static void device() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.81");
        InetAddress b = InetAddress.getByName("127.0.0.82");
        roce = SoftDevices.freeUdpPort(28_000, a, b);
        dev = Verbs.createDevice("soft:udp?name=cmk&addr=127.0.0.81&port=" + roce);
        CmEngine.INSTANCE.opener = GsiOpener.PROVIDER;
    }

    @AfterAll
    static void removeDevice() throws InterruptedException {
        awaitNoAgents();
        Verbs.removeDevice(dev);
    }

    /** The peer: a UDP device, a listener, one accepted connection with a QP; then it waits to be killed. */
    public static void main(String[] args) throws Exception {
        Device d = Verbs.createDevice("soft:udp?name=cmkpeer&addr=" + args[0] + "&port=" + args[1]);
        try (CmEventChannel ch = new CmEventChannel(); CmId listener = ch.createId(PortSpace.TCP)) {
            listener.bindAddr(new InetSocketAddress(InetAddress.getByName(args[0]), Integer.parseInt(args[2])));
            listener.listen(4);
            System.out.println("LISTENING");
            CmEvent req = ch.getEvent(60, TimeUnit.SECONDS);
            req.ack();
            Ep ep = new Ep(req.id());
            req.id().accept(new ConnParam());
            CmEvent est = ch.getEvent(60, TimeUnit.SECONDS);
            est.ack();
            System.out.println(est.type());
            Thread.sleep(TimeUnit.SECONDS.toMillis(60)); // killed long before
            ep.close();
        } finally {
            Verbs.removeDevice(d);
        }
    }

    @Test
    void aPeerJvmKilledAfterEstablishedEndsInTimeoutsAndFlushesEveryWr() throws Exception {
        int port = port();
        List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                CmKilledPeerTest.class.getName(), "127.0.0.82", Integer.toString(roce), Integer.toString(port)));
        Process peer = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader out = peer.inputReader(StandardCharsets.UTF_8);
             CmEventChannel cch = new CmEventChannel(); CmId client = cch.createId(PortSpace.TCP)) {
            assertEquals("LISTENING", out.readLine());
            quick(client);
            client.setAckTimeout(10); // 4 ms per RC retry
            client.resolveAddr(new InetSocketAddress("127.0.0.81", 0), new InetSocketAddress("127.0.0.82", port), 2000);
            expect(cch, CmEventType.ADDR_RESOLVED);
            client.resolveRoute(2000);
            expect(cch, CmEventType.ROUTE_RESOLVED);
            Ep ce = new Ep(client);
            client.connect(new ConnParam().retryCount(2));
            expect(cch, CmEventType.ESTABLISHED);
            assertEquals("ESTABLISHED", out.readLine(), "the peer saw the RTU");
            peer.destroyForcibly();
            assertTrue(peer.waitFor(WAIT_S, TimeUnit.SECONDS), "the peer JVM did not die");
            ce.qp.postRecv(new RecvWorkRequest().wrId(1).sge(ce.mr, 0, 64));
            ce.qp.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                    .sge(ce.mr, 0, 8));
            java.util.Map<Long, WcStatus> done = new java.util.HashMap<>();
            for (int i = 0; i < 2; i++) {
                WorkCompletion wc = ce.poll();
                done.put(wc.wrId(), wc.status());
            }
            assertEquals(WcStatus.RETRY_EXC_ERR, done.get(2L), "the SEND to a dead peer times out");
            assertEquals(WcStatus.WR_FLUSH_ERR, done.get(1L), "the receive is flushed");
            client.disconnect();
            CmEvent d = expect(cch, CmEventType.DISCONNECTED);
            assertEquals(-Errno.ETIMEDOUT, d.status(), "nobody answers the DREQ");
            expect(cch, CmEventType.TIMEWAIT_EXIT);
            ce.close();
            try (Context c = dev.open()) {
                assertEquals(0L, c.counters(1).get("gsi_overflow_drops"));
            }
        } finally {
            peer.destroyForcibly();
        }
    }
}
