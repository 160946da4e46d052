// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The convenience layer: {@link Endpoint} (rdma_create_ep and rdma_verbs.h) and the Java front
 * ({@link RdmaServer}, {@link RdmaClient}) between two soft devices: real QPs and data, the MADs on
 * the fake QP1 pair (or the devices' own with {@code -Drdma4j.cm.test.gsi=provider}).
 */
class EndpointTest extends CmTestSupport {
    private static ExecutorService pool;

    @BeforeAll
    static void devices() {
        setUpDevices("cmep");
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "endpoint-test");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterAll
    static void removeDevices() {
        pool.shutdownNow();
        tearDownDevices();
    }

    @AfterEach
    void agentsGoWithTheirLastId() throws InterruptedException {
        awaitNoAgents();
    }

    private static EndpointOptions quickOptions() {
        return new EndpointOptions().responseTimeout(12).maxCmRetries(3).source(ipA);
    }

    private static <T> Future<T> async(Callable<T> c) {
        return pool.submit(c);
    }

    /** Waits (bounded) until {@code t} blocks; a test goes on either way, its outcome does not depend on it. */
    private static void awaitBlocked(Thread[] t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() - deadline < 0) {
            Thread th = t[0];
            if (th != null && (th.getState() == Thread.State.WAITING || th.getState() == Thread.State.TIMED_WAITING)) {
                return;
            }
            Thread.sleep(2);
        }
    }

    private static void put(MemorySegment seg, String s) {
        seg.fill((byte) 0);
        byte[] b = text(s);
        MemorySegment.copy(b, 0, seg, ValueLayout.JAVA_BYTE, 0, b.length);
    }

    private static String get(MemorySegment seg, int n) {
        return new String(seg.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), java.nio.charset.StandardCharsets.US_ASCII);
    }

    @Test
    void theServerAcceptsAConnectedEndpointAndTheClientGetsAReadyQueuePair() throws Exception {
        int port = port();
        try (Arena arena = Arena.ofShared();
             RdmaServer server = RdmaServer.listen(new InetSocketAddress(ipB, port), quickOptions().source(null))) {
            assertEquals(port, server.localAddress().getPort());
            MemorySegment sbuf = arena.allocate(64, 64);
            MemorySegment cbuf = arena.allocate(64, 64);
            EndpointOptions copts = quickOptions().connParam(new ConnParam().privateData(text("hello server")));
            Future<Endpoint> client = async(() -> RdmaClient.connect(new InetSocketAddress(ipB, port), copts));
            MemoryRegion[] smr = new MemoryRegion[1];
            try (Endpoint conn = server.accept(ep -> {
                     smr[0] = ep.regMsgs(sbuf);
                     ep.postRecv(7, sbuf, smr[0]); // before accepting, as the seed's agent does
                 });
                 Endpoint c = client.get(WAIT_S, TimeUnit.SECONDS)) {
                assertTrue(conn.isConnected() && c.isConnected());
                assertEquals(QpState.RTS, c.qp().state());
                assertEquals(QpState.RTS, conn.qp().state());
                assertEquals(CmEventType.ESTABLISHED, conn.lastEvent().type());
                assertEquals(CmEventType.CONNECT_REQUEST, conn.connectRequest().type());
                assertEquals("hello server", prefix(conn.connectRequest().privateData(), 12));
                assertNull(c.connectRequest());
                assertEquals(new InetSocketAddress(ipA, c.localAddress().getPort()), conn.remoteAddress());
                assertNotNull(c.sendCq().channel(), "the endpoint's CQs have completion channels");

                // the server waits (armed CQ, completion channel) before the client sends
                Thread[] waiter = new Thread[1];
                WorkCompletion got = new WorkCompletion();
                Future<Boolean> recv = async(() -> {
                    waiter[0] = Thread.currentThread();
                    return conn.getRecvComp(got, WAIT_S, TimeUnit.SECONDS);
                });
                awaitBlocked(waiter);
                MemoryRegion cmr = c.regMsgs(cbuf);
                put(cbuf, "ping over an endpoint");
                c.postSend(9, cbuf.asSlice(0, 21), cmr, SendFlag.SIGNALED);
                WorkCompletion sent = new WorkCompletion();
                c.getSendComp(sent);
                assertEquals(WcStatus.SUCCESS, sent.status());
                assertEquals(WcOpcode.SEND, sent.opcode());
                assertEquals(9, sent.wrId());
                assertTrue(recv.get(WAIT_S, TimeUnit.SECONDS));
                assertEquals(WcStatus.SUCCESS, got.status());
                assertEquals(7, got.wrId());
                assertEquals(21, got.byteLen());
                assertEquals("ping over an endpoint", get(sbuf, 21));

                // the client goes away: disconnect returns at once (the DREQ came) and, as with the
                // kernel's CM, only then is the server's QP in ERROR and its posted receive flushed
                conn.postRecv(8, sbuf, smr[0]);
                c.close();
                conn.disconnect();
                assertEquals(CmEventType.DISCONNECTED, conn.lastEvent().type());
                WorkCompletion flushed = new WorkCompletion();
                conn.getRecvComp(flushed);
                assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status());
                assertEquals(8, flushed.wrId());
                assertFalse(conn.isConnected());
            }
        }
    }

    @Test
    void rdmaWriteAndReadThroughTheEndpointAndARealErrorStatus() throws Exception {
        int port = port();
        try (Arena arena = Arena.ofShared(); Endpoint listener = Endpoint.create(
                AddrInfo.passive(ipB.getHostAddress(), port), null, new org.rdma4j.verbs.QpInitAttr())) {
            quick(listener.id());
            listener.listen(1);
            Endpoint client = Endpoint.create(AddrInfo.active(ipB.getHostAddress(), port).withSource(ipA), null,
                    new org.rdma4j.verbs.QpInitAttr());
            quick(client.id());
            Future<Void> connected = async(() -> {
                client.connect(null);
                return null;
            });
            try (client; Endpoint agent = listener.getRequest(WAIT_S, TimeUnit.SECONDS)) {
                assertNotNull(agent, "no request");
                assertEquals(QpState.INIT, agent.qp().state());
                MemorySegment target = arena.allocate(128, 64);
                MemoryRegion tmr = agent.regMr(target, org.rdma4j.verbs.Access.LOCAL_WRITE
                        | org.rdma4j.verbs.Access.REMOTE_WRITE | org.rdma4j.verbs.Access.REMOTE_READ);
                agent.accept(null);
                connected.get(WAIT_S, TimeUnit.SECONDS);

                MemorySegment src = arena.allocate(128, 64);
                MemorySegment back = arena.allocate(128, 64);
                MemoryRegion smr = client.regMsgs(src);
                MemoryRegion bmr = client.regMsgs(back);
                put(src, "written then read back");
                WorkCompletion wc = new WorkCompletion();
                client.postWrite(1, src.asSlice(0, 22), smr, 0, tmr.address(), tmr.rkey()); // unsignaled
                client.postRead(2, back.asSlice(0, 22), bmr, SendFlag.SIGNALED, tmr.address(), tmr.rkey());
                client.getSendComp(wc);
                assertEquals(WcStatus.SUCCESS, wc.status());
                assertEquals(WcOpcode.RDMA_READ, wc.opcode(), "the unsignaled WRITE gives no completion");
                assertEquals("written then read back", get(target, 22));
                assertEquals("written then read back", get(back, 22));

                // a wrong rkey: the WRITE completes with the responder's verdict
                client.postWrite(3, src.asSlice(0, 8), smr, SendFlag.SIGNALED, tmr.address(), tmr.rkey() ^ 0x5a5a00);
                client.getSendComp(wc);
                assertEquals(WcStatus.REM_ACCESS_ERR, wc.status());
                assertEquals(3, wc.wrId());
            }
        }
    }

    @Test
    void aClientToAPortNobodyListensOnIsRefused() throws Exception {
        int port = port();
        // a server on another port, so that the peer's CM agent is there to answer with REJ 8
        try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(ipB, port), quickOptions().source(null))) {
            VerbsException e = assertThrows(VerbsException.class,
                    () -> RdmaClient.connect(new InetSocketAddress(ipB, port + 1000), quickOptions()));
            assertEquals(Errno.ECONNREFUSED, e.errno(), e::getMessage);
            assertTrue(e.getMessage().contains("REJECTED, reason 8 (invalid service ID: nothing listens on port "
                    + (port + 1000) + " there)"), e::getMessage);
        }
    }

    @Test
    void aRequestClosedBeforeAcceptingIsRefusedAtTheClient() throws Exception {
        int port = port();
        try (Endpoint listener = Endpoint.create(AddrInfo.passive(null, port), null, new org.rdma4j.verbs.QpInitAttr())) {
            quick(listener.id());
            listener.listen(1);
            Future<Endpoint> client = async(() -> RdmaClient.connect(new InetSocketAddress(ipB, port), quickOptions()));
            Endpoint request = listener.getRequest(WAIT_S, TimeUnit.SECONDS);
            assertNotNull(request);
            QueuePair qp = request.qp();
            request.close(); // never accepted: rejected
            request.close(); // idempotent
            assertTrue(qp.isClosed());
            ExecutionException e = assertThrows(ExecutionException.class, () -> client.get(WAIT_S, TimeUnit.SECONDS));
            VerbsException v = assertInstanceOf(VerbsException.class, e.getCause());
            assertEquals(Errno.ECONNREFUSED, v.errno(), v::getMessage);
        }
    }

    @Test
    void aBlockedAcceptReturnsWithAnErrorWhenTheServerCloses() throws Exception {
        RdmaServer server = RdmaServer.listen(new InetSocketAddress(ipB, port()), quickOptions().source(null));
        Thread[] waiter = new Thread[1];
        Future<Endpoint> accept = async(() -> {
            waiter[0] = Thread.currentThread();
            return server.accept();
        });
        awaitBlocked(waiter);
        server.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> accept.get(WAIT_S, TimeUnit.SECONDS));
        VerbsException v = assertInstanceOf(VerbsException.class, e.getCause());
        assertEquals(Errno.EBADF, v.errno());
        assertTrue(server.isClosed());
        server.close(); // idempotent
        assertThrows(VerbsException.class, server::accept);
    }

    @Test
    void closeIsSafeInEveryStateAndReleasesWhatTheEndpointMade() throws Exception {
        int port = port();
        // passive, never listening
        Endpoint idle = Endpoint.create(AddrInfo.passive(ipB.getHostAddress(), port), null, null);
        idle.close();
        idle.close();
        assertThrows(VerbsException.class, () -> idle.getRequest(0, TimeUnit.SECONDS));

        // active, resolved, with its QP, never connected
        try (Arena arena = Arena.ofShared()) {
            Endpoint resolved = Endpoint.create(AddrInfo.active(ipB.getHostAddress(), port).withSource(ipA), null,
                    new org.rdma4j.verbs.QpInitAttr());
            QueuePair qp = resolved.qp();
            CompletionQueue scq = resolved.sendCq();
            CompletionQueue rcq = resolved.recvCq();
            ProtectionDomain pd = resolved.pd();
            MemoryRegion mr = resolved.regMsgs(arena.allocate(64));
            org.rdma4j.verbs.CompletionChannel sch = scq.channel();
            assertEquals(QpState.INIT, qp.state());
            assertTrue(scq != rcq && sch != null && sch != rcq.channel());
            VerbsException twice = assertThrows(VerbsException.class,
                    () -> resolved.createQp(null, new org.rdma4j.verbs.QpInitAttr()));
            assertEquals(Errno.EINVAL, twice.errno());
            resolved.close();
            assertTrue(qp.isClosed() && scq.isClosed() && rcq.isClosed() && pd.isClosed() && mr.isClosed());
            assertTrue(sch.isClosed());
            resolved.close();
            VerbsException post = assertThrows(VerbsException.class,
                    () -> resolved.postSend(1, arena.allocate(8), null, SendFlag.INLINE));
            assertEquals(Errno.EBADF, post.errno());
        }

        // connected, with a thread waiting for a send completion that never comes: close wakes it
        try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(ipB, port), quickOptions().source(null))) {
            Future<Endpoint> client = async(() -> RdmaClient.connect(new InetSocketAddress(ipB, port), quickOptions()));
            try (Endpoint conn = server.accept()) {
                Endpoint c = client.get(WAIT_S, TimeUnit.SECONDS);
                Thread[] waiter = new Thread[1];
                Future<Boolean> wait = async(() -> {
                    waiter[0] = Thread.currentThread();
                    return c.getSendComp(new WorkCompletion(), WAIT_S, TimeUnit.SECONDS);
                });
                awaitBlocked(waiter);
                c.close();
                ExecutionException e = assertThrows(ExecutionException.class, () -> wait.get(WAIT_S, TimeUnit.SECONDS));
                VerbsException v = assertInstanceOf(VerbsException.class, e.getCause());
                assertEquals(Errno.EBADF, v.errno());
                conn.disconnect(); // the peer's DREQ came: DISCONNECTED at once
                assertEquals(CmEventType.DISCONNECTED, conn.lastEvent().type());
            }
        }
    }

    @Test
    void badCallsGetTheErrnoACProgrammerWouldSee() throws Exception {
        int port = port();
        try (Arena arena = Arena.ofShared();
             RdmaServer server = RdmaServer.listen(new InetSocketAddress(ipB, port), quickOptions().source(null))) {
            VerbsException inUse = assertThrows(VerbsException.class,
                    () -> RdmaServer.listen(new InetSocketAddress(ipB, port), new EndpointOptions()));
            assertEquals(Errno.EADDRINUSE, inUse.errno());
            Future<Endpoint> client = async(() -> RdmaClient.connect(new InetSocketAddress(ipB, port), quickOptions()));
            try (Endpoint conn = server.accept(); Endpoint c = client.get(WAIT_S, TimeUnit.SECONDS)) {
                MemorySegment buf = arena.allocate(64);
                MemoryRegion mr = c.regMsgs(buf.asSlice(0, 32));
                VerbsException outside = assertThrows(VerbsException.class, () -> c.postRecv(1, buf, mr));
                assertEquals(Errno.EINVAL, outside.errno());
                // nothing posted: a bounded wait ends empty-handed
                assertFalse(conn.getRecvComp(new WorkCompletion(), 20, TimeUnit.MILLISECONDS));
                VerbsException none = assertThrows(VerbsException.class,
                        () -> conn.timeout(java.time.Duration.ofMillis(20)).getRecvComp(new WorkCompletion()));
                assertEquals(Errno.ETIMEDOUT, none.errno());
                assertThrows(VerbsException.class, () -> c.listen(1)); // not passive
                assertThrows(VerbsException.class, () -> c.connect(null)); // connected already
            }
        }
        VerbsException unknown = assertThrows(VerbsException.class, () -> AddrInfo.active("no-such-host.invalid", 1));
        assertEquals(Errno.ENOENT, unknown.errno());
        assertNull(AddrInfo.active(ipB.getHostAddress(), 1).source());
    }

    @Test
    void aListenerWithoutQpAttributesLeavesTheQpToTheProgramAndRejectCarriesPrivateData() throws Exception {
        int port = port();
        try (Endpoint listener = Endpoint.create(AddrInfo.passive(ipB.getHostAddress(), port), null, null)) {
            quick(listener.id());
            listener.listen(2);
            // the first request is rejected with a reason the client can read
            Endpoint refused = Endpoint.create(AddrInfo.active(ipB.getHostAddress(), port).withSource(ipA), null,
                    new org.rdma4j.verbs.QpInitAttr());
            quick(refused.id());
            Future<VerbsException> rejected = async(() -> assertThrows(VerbsException.class, () -> refused.connect(null)));
            try (Endpoint request = listener.getRequest(WAIT_S, TimeUnit.SECONDS)) {
                assertNotNull(request);
                assertNull(request.qp(), "no attributes given: no QP");
                request.reject(text("not today"));
            }
            assertEquals(Errno.ECONNREFUSED, rejected.get(WAIT_S, TimeUnit.SECONDS).errno());
            assertEquals(CmEventType.REJECTED, refused.lastEvent().type());
            assertEquals(28, refused.lastEvent().status());
            assertEquals("not today", prefix(refused.lastEvent().privateData(), 9));
            refused.close();

            // the second gets its QP from the program (rdma_create_qp) and is accepted
            Future<Endpoint> client = async(() -> RdmaClient.connect(new InetSocketAddress(ipB, port), quickOptions()));
            try (Endpoint request = listener.getRequest(WAIT_S, TimeUnit.SECONDS)) {
                assertNotNull(request);
                QueuePair qp = request.createQp(null, new org.rdma4j.verbs.QpInitAttr());
                assertEquals(QpState.INIT, qp.state());
                request.accept(new ConnParam().privateData(text("welcome")));
                try (Endpoint c = client.get(WAIT_S, TimeUnit.SECONDS)) {
                    assertEquals(QpState.RTS, qp.state());
                    assertEquals(CmEventType.ESTABLISHED, c.lastEvent().type());
                    assertEquals("welcome", prefix(c.lastEvent().privateData(), 7));
                }
            }
        }
    }
}
