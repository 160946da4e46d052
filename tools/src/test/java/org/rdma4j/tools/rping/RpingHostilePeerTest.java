// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.rping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.tools.Rdma4j;
import org.rdma4j.tools.text.HostileBytes;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.WorkCompletion;
import picocli.CommandLine;

/**
 * An rping server with -v against a hostile client on its own soft device: the client connects through
 * the connection manager and advertises a ping buffer of terminal escapes, BEL, CR and bytes that are not
 * UTF-8, with no NUL; the server reads it and prints it with every one of them replaced.
 */
@Timeout(120)
class RpingHostilePeerTest {
    private static final int SIZE = 64;
    private static ExecutorService pool;
    private static Device devA;
    private static Device devB;
    private static String ipA;
    private static String ipB;

    @BeforeAll
    static void setUp() {
        devA = Verbs.createDevice("soft:loopback?name=rping-hostile-a&fabric=rping-hostile");
        devB = Verbs.createDevice("soft:loopback?name=rping-hostile-b&fabric=rping-hostile");
        try (Context a = devA.open(); Context b = devB.open()) {
            ipA = a.queryGid(1, 1).toInetAddress().getHostAddress();
            ipB = b.queryGid(1, 1).toInetAddress().getHostAddress();
        }
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "rping-hostile-test");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterAll
    static void tearDown() {
        pool.shutdownNow();
        Verbs.removeDevice(devA);
        Verbs.removeDevice(devB);
    }

    private static CmEvent expect(CmEventChannel ch, CmEventType want) throws InterruptedException {
        CmEvent e = ch.getEvent(20, TimeUnit.SECONDS);
        assertNotNull(e, "no " + want);
        e.ack();
        assertEquals(want, e.type());
        return e;
    }

    private static void await(CompletionQueue cq) throws InterruptedException {
        WorkCompletion[] wc = WorkCompletion.array(1);
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (cq.poll(wc) == 0) {
            assertTrue(System.nanoTime() < giveUp, "no completion");
            Thread.sleep(1);
        }
        assertTrue(wc[0].isSuccess(), wc[0].status().toString());
    }

    @Test
    void theServerPrintsAHostilePingWithoutControlCharacters() throws Exception {
        int port = 18_000 + (int) (ProcessHandle.current().pid() % 1000);
        String[] args = {"rping", "-s", "-a", ipB, "-p", Integer.toString(port), "-S", Integer.toString(SIZE), "-v", "-d"};
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Rdma4j.commandLine(args);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        Future<Integer> server = pool.submit(() -> cl.execute(args));
        long listening = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!out.toString().contains("listening on")) {
            assertTrue(!server.isDone() && System.nanoTime() < listening, out + "\n" + err);
            Thread.sleep(10);
        }

        // the ping: "rdma-ping-0: ", the attack, then letters up to the end of the buffer, no NUL
        byte[] ping = new byte[SIZE];
        java.util.Arrays.fill(ping, (byte) 'A');
        byte[] head = "rdma-ping-0: ".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(head, 0, ping, 0, head.length);
        System.arraycopy(HostileBytes.TERMINAL_ATTACK, 0, ping, head.length, HostileBytes.TERMINAL_ATTACK.length);

        try (CmEventChannel ch = new CmEventChannel(); Arena arena = Arena.ofShared()) {
            CmId id = ch.createId(PortSpace.TCP);
            id.resolveAddr(new InetSocketAddress(InetAddress.getByName(ipA), 0),
                    new InetSocketAddress(InetAddress.getByName(ipB), port), 2000);
            expect(ch, CmEventType.ADDR_RESOLVED);
            id.resolveRoute(2000);
            expect(ch, CmEventType.ROUTE_RESOLVED);
            Context ctx = id.context();
            ProtectionDomain pd = ctx.allocPd();
            CompletionQueue cq = ctx.createCq(8);
            QueuePair qp = id.createQp(pd, new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(4, 4, 1, 1, 0)));
            MemorySegment buf = arena.allocate(SIZE, 8);
            MemorySegment.copy(ping, 0, buf, ValueLayout.JAVA_BYTE, 0, SIZE);
            MemoryRegion pingMr = pd.regMr(buf, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            MemorySegment info = arena.allocate(16, 8);
            MemoryRegion infoMr = pd.regMr(info, Access.LOCAL_WRITE);
            MemorySegment reply = arena.allocate(16, 8);
            MemoryRegion replyMr = pd.regMr(reply, Access.LOCAL_WRITE);
            qp.postRecv(new RecvWorkRequest().wrId(1).sge(replyMr, 0, 16));
            id.connect(new ConnParam().retryCount(7).rnrRetryCount(7));
            expect(ch, CmEventType.ESTABLISHED);
            // struct rping_rdma_info: be64 buf, be32 rkey, be32 size
            info.set(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 0, pingMr.address());
            info.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 8, pingMr.rkey());
            info.set(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 12, SIZE);
            qp.postSend(new SendWorkRequest().wrId(2).flags(SendFlag.SIGNALED).sge(infoMr, 0, 16).send());
            await(cq); // our SEND
            await(cq); // the server's go-ahead, after its READ of the ping
            id.disconnect();
            server.get(60, TimeUnit.SECONDS);
            id.destroyQp();
            for (AutoCloseable r : new AutoCloseable[] {pingMr, infoMr, replyMr, cq, pd, id}) {
                r.close();
            }
        }
        String printed = out.toString() + err;
        assertTrue(printed.contains("server ping data: rdma-ping-0: ?[2J???(???x" + "A".repeat(SIZE - 25) + "\n"),
                printed);
        HostileBytes.assertNoControlCharacters(printed);
    }
}
