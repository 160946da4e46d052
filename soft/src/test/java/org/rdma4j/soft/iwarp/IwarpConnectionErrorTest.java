// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * How two {@link IwarpConnection}s over loopback TCP end in error, with the completions siw gives: a
 * Terminate sent for a Send with no receive or too short a receive, a Read whose sink this side refuses,
 * a refused TCP connect, and the agent's close with connections open.
 */
class IwarpConnectionErrorTest {
    private static final byte[] NONE = new byte[0];

    @Test
    void aSendWithNoReceivePostedCompletesAtTransmitAndTheReceiversTerminateFlushesTheRest() throws Exception {
        try (AgentPair p = new AgentPair()) {
            p.b.device.register(0x22, 64, 0, StagResolver.Use.REMOTE_READ);
            p.a.device.register(0x33, 64, 0, StagResolver.Use.LOCAL_WRITE);
            p.connect(1, 1, NONE, NONE);
            p.ca.postRecv(10, TestQp.slices(64));
            p.ca.postSend(1, Rdmap.SEND, 0, TestQp.slices(100));
            p.ca.postRead(2, 0x33, 0, 64, 0x22, 0);
            List<TestQp.Wc> a = p.a.next(3);
            // siw completes the Send once TCP has its bytes; the peer's Terminate then flushes the rest
            assertEquals(List.of(TestQp.Wc.send(1, WcStatus.SUCCESS, WcOpcode.SEND, 100),
                    TestQp.Wc.flushed(2, WcOpcode.RDMA_READ)), TestQp.of(a, false));
            assertEquals(List.of(TestQp.Wc.flushed(10, WcOpcode.RECV)), TestQp.of(a, true));
            assertTrue(AgentPair.await(p.ca.ended()).contains("sent a Terminate"));
            assertTrue(AgentPair.await(p.cb.ended()).contains("a Terminate was sent"));
            p.cb.postRecv(20, TestQp.slices(8));
            p.cb.postSend(21, Rdmap.SEND, 0, TestQp.slices(8));
            assertEquals(List.of(TestQp.Wc.flushed(20, WcOpcode.RECV), TestQp.Wc.flushed(21, WcOpcode.SEND)),
                    p.b.next(2));
        }
    }

    @Test
    void aReceiveTooShortCompletesWithLocLenErrAndEveryOtherReceiveIsFlushed() throws Exception {
        try (AgentPair p = new AgentPair().connect(1, 1, NONE, NONE)) {
            p.cb.postRecv(30, TestQp.slices(10));
            p.cb.postRecv(31, TestQp.slices(100));
            p.ca.postRecv(40, TestQp.slices(100));
            p.ca.postSend(1, Rdmap.SEND, 0, TestQp.slices(100));
            assertEquals(List.of(TestQp.Wc.recv(30, WcStatus.LOC_LEN_ERR, 0), TestQp.Wc.flushed(31, WcOpcode.RECV)),
                    p.b.next(2));
            List<TestQp.Wc> a = p.a.next(2);
            assertEquals(List.of(TestQp.Wc.send(1, WcStatus.SUCCESS, WcOpcode.SEND, 100)), TestQp.of(a, false));
            assertEquals(List.of(TestQp.Wc.flushed(40, WcOpcode.RECV)), TestQp.of(a, true));
        }
    }

    @Test
    void aReadWhoseSinkThisSideRefusesCompletesWithLocProtErrAndTheQueuedReadIsFlushed() throws Exception {
        try (AgentPair p = new AgentPair()) {
            p.b.device.register(0x22, 4096, 0, StagResolver.Use.REMOTE_READ)
                    .window.copyFrom(RdmapLoopbackTest.bytes(4096, 7));
            FakeDevice.Region sink = p.a.device.register(0x33, 4096, 0, StagResolver.Use.REMOTE_READ);
            p.connect(1, 1, NONE, NONE);
            p.ca.postRead(1, 0x33, 0, 4096, 0x22, 0);
            p.ca.postRead(2, 0x33, 0, 4096, 0x22, 0);
            assertEquals(List.of(TestQp.Wc.send(1, WcStatus.LOC_PROT_ERR, WcOpcode.RDMA_READ, 0),
                    TestQp.Wc.flushed(2, WcOpcode.RDMA_READ)), p.a.next(2));
            assertTrue(sink.guardsIntact());
            assertTrue(sink.window.elements(ValueLayout.JAVA_BYTE).allMatch(x -> x.get(ValueLayout.JAVA_BYTE, 0) == 0));
            AgentPair.await(p.cb.ended());
        }
    }

    @Test
    void aRejectedRequestFailsTheSetupWithEconnrefusedAndThePeersPrivateDataAndFlushesThePostedWork() throws Exception {
        try (AgentPair p = new AgentPair()) {
            IwarpConnection c = p.agentA.connect(p.listener.localAddress(), MpaConfig.siwDefaults(), 1, 1, NONE,
                    p.a.qp(4), IwarpAgent.DEFAULT_CONNECT_TIMEOUT_NS);
            c.postRecv(1, TestQp.slices(8));
            AgentPair.await(p.requests).reject(new byte[] {7, 7});
            ExecutionException e = assertThrows(ExecutionException.class, () -> AgentPair.await(c.established()));
            VerbsException v = assertInstanceOf(VerbsException.class, e.getCause());
            assertEquals(Errno.ECONNREFUSED, v.errno());
            assertTrue(c.setupFailure().rejectedByPeer());
            assertArrayEquals(new byte[] {7, 7}, c.setupFailure().peerPrivateData());
            assertEquals(TestQp.Wc.flushed(1, WcOpcode.RECV), p.a.next());
        }
    }

    @Test
    void aConnectToAClosedPortFailsWithEconnrefused() throws Exception {
        InetSocketAddress closed;
        try (ServerSocketChannel s = ServerSocketChannel.open()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            closed = (InetSocketAddress) s.getLocalAddress();
        }
        TestQp qp = new TestQp();
        try (IwarpAgent agent = new IwarpAgent("iwarp-test-refused")) {
            IwarpConnection c = agent.connect(closed, MpaConfig.siwDefaults(), 1, 1, NONE, qp.qp(4),
                    IwarpAgent.DEFAULT_CONNECT_TIMEOUT_NS);
            c.postRecv(1, TestQp.slices(8));
            ExecutionException e = assertThrows(ExecutionException.class, () -> AgentPair.await(c.established()));
            assertEquals(Errno.ECONNREFUSED, assertInstanceOf(VerbsException.class, e.getCause()).errno());
            assertEquals(TestQp.Wc.flushed(1, WcOpcode.RECV), qp.next());
        }
    }

    @Test
    void aConnectThatGetsNoAnswerFailsWithEtimedoutAtItsTimeout() throws Exception {
        TestQp qp = new TestQp();
        List<SocketChannel> fillers = new ArrayList<>();
        try (ServerSocketChannel full = ServerSocketChannel.open();
             IwarpAgent agent = new IwarpAgent("iwarp-test-timeout")) {
            // a listener that never accepts, its backlog filled: the kernel drops further SYNs
            full.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
            for (int i = 0; i < 8; i++) {
                SocketChannel f = SocketChannel.open();
                f.configureBlocking(false);
                f.connect(full.getLocalAddress());
                fillers.add(f);
            }
            IwarpConnection c = agent.connect((InetSocketAddress) full.getLocalAddress(), MpaConfig.siwDefaults(), 1, 1,
                    NONE, qp.qp(4), TimeUnit.MILLISECONDS.toNanos(300));
            ExecutionException e = assertThrows(ExecutionException.class, () -> AgentPair.await(c.established()));
            VerbsException v = assertInstanceOf(VerbsException.class, e.getCause());
            // a full backlog drops the SYN (no answer: ETIMEDOUT); an MPA request sent into an accept queue
            // nobody serves ends with the MPA reply's timeout instead, which this short connect timeout precedes
            assertEquals(Errno.ETIMEDOUT, v.errno(), v.getMessage());
            assertTrue(v.getMessage().contains("TCP connect"), v.getMessage());
        } finally {
            for (SocketChannel f : fillers) {
                f.close();
            }
        }
    }

    @Test
    void closingAConnectionFlushesItsWorkAndThePeerSeesTheCloseAndFlushesItsOwn() throws Exception {
        try (AgentPair p = new AgentPair().connect(1, 1, NONE, NONE)) {
            p.ca.postRecv(1, TestQp.slices(8));
            p.cb.postRecv(2, TestQp.slices(8));
            p.ca.close();
            assertEquals(TestQp.Wc.flushed(1, WcOpcode.RECV), p.a.next());
            assertEquals(TestQp.Wc.flushed(2, WcOpcode.RECV), p.b.next());
            assertTrue(AgentPair.await(p.cb.ended()).contains("closed the TCP connection"));
            assertEquals(IwarpConnection.State.ERROR, p.ca.state());
        }
    }

    @Test
    void closingAnAgentEndsItsConnectionsFlushesTheirWorkAndStopsItsThread() throws Exception {
        try (AgentPair p = new AgentPair().connect(1, 1, NONE, NONE)) {
            p.ca.postRecv(1, TestQp.slices(8));
            p.ca.postRecv(2, TestQp.slices(8));
            p.cb.postRecv(3, TestQp.slices(8));
            p.agentA.close();
            assertTrue(p.agentA.stopped());
            assertEquals(List.of(TestQp.Wc.flushed(1, WcOpcode.RECV), TestQp.Wc.flushed(2, WcOpcode.RECV)),
                    p.a.next(2));
            assertEquals(TestQp.Wc.flushed(3, WcOpcode.RECV), p.b.next());
            p.ca.postSend(4, Rdmap.SEND, 0, new MemorySegment[0]);
            assertEquals(TestQp.Wc.flushed(4, WcOpcode.SEND), p.a.next());
        }
    }
}
