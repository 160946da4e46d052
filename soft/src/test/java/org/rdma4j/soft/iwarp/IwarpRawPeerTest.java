// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * An {@link IwarpAgent}'s connection against a raw socket on loopback that speaks MPA through the engines
 * and then misbehaves: it dies (closes with a reset) with work posted, or sends garbage FPDUs.
 */
class IwarpRawPeerTest {
    private static final byte[] NONE = new byte[0];

    @Test
    void aPeerThatDiesFlushesEveryPostedWorkRequestInOrder() throws Exception {
        TestQp qp = new TestQp();
        qp.device.register(0x33, 4096, 0, StagResolver.Use.LOCAL_WRITE);
        try (ServerSocketChannel server = ServerSocketChannel.open();
             IwarpAgent agent = new IwarpAgent("iwarp-test-dies")) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            IwarpConnection c = agent.connect((InetSocketAddress) server.getLocalAddress(), MpaConfig.siwDefaults(),
                    1, 1, NONE, qp.qp(8), IwarpAgent.DEFAULT_CONNECT_TIMEOUT_NS);
            c.postRecv(1, TestQp.slices(8));
            c.postRecv(2, TestQp.slices(8));
            try (SocketChannel raw = server.accept()) {
                MpaResponder responder = new MpaResponder(MpaConfig.siwDefaults(), "the test's initiator");
                MpaSocketDriver.drive(responder, raw, System::nanoTime);
                responder.accept(1, 1, NONE);
                MpaSocketDriver.drive(responder, raw, System::nanoTime);
                assertNotNull(responder.connection());
                AgentPair.await(c.established());
                c.postRead(3, 0x33, 0, 4096, 0x77, 0);
                c.postRead(4, 0x33, 0, 4096, 0x77, 0);
                raw.setOption(StandardSocketOptions.SO_LINGER, 0);
            }
            List<TestQp.Wc> all = qp.next(4);
            assertEquals(List.of(TestQp.Wc.flushed(3, WcOpcode.RDMA_READ), TestQp.Wc.flushed(4, WcOpcode.RDMA_READ)),
                    TestQp.of(all, false));
            assertEquals(List.of(TestQp.Wc.flushed(1, WcOpcode.RECV), TestQp.Wc.flushed(2, WcOpcode.RECV)),
                    TestQp.of(all, true));
            AgentPair.await(c.ended());
        }
    }

    @Test
    void garbageFpdusFromAHostilePeerGetATerminateBackAndTouchNoByteOutsideAWindow() throws Exception {
        try (AgentPair p = new AgentPair()) {
            FakeDevice.Region target = p.b.device.register(0x44, 100, 0, StagResolver.Use.REMOTE_WRITE);
            try (SocketChannel raw = establishRaw(p, 1)) {
                MemorySegment wire = MemorySegment.ofArray(new byte[1024]);
                int n = new FpduEncoder(false).tagged(wire, 0, Rdmap.RDMA_WRITE, true, 0x44, 90,
                        RdmapLoopbackTest.bytes(64, 4), 0, 64);
                byte[] junk = new byte[512];
                new SplittableRandom(27).nextBytes(junk);
                MemorySegment.copy(MemorySegment.ofArray(junk), 0, wire, n, junk.length);
                assertEquals(List.of(Rdmap.TERMINATE + " 1101c000"), answer(raw, wire.asSlice(0, n + junk.length)));
            }
            assertEquals(TestQp.Wc.flushed(1, WcOpcode.RECV), p.b.next());
            assertTrue(AgentPair.await(p.requests.join().ended()).contains("a Terminate was sent"));
            assertTrue(target.guardsIntact());
            assertFalse(target.window.elements(ValueLayout.JAVA_BYTE).anyMatch(x -> x.get(ValueLayout.JAVA_BYTE, 0) != 0));
        }
    }

    @Test
    void aSendCutByAnotherSendCompletesItsReceiveWithGeneralErrAndFlushesTheNext() throws Exception {
        try (AgentPair p = new AgentPair()) {
            try (SocketChannel raw = establishRaw(p, 1, 2)) {
                MemorySegment wire = MemorySegment.ofArray(new byte[256]);
                FpduEncoder e = new FpduEncoder(false);
                MemorySegment data = RdmapLoopbackTest.bytes(16, 8);
                int n = e.send(wire, 0, Rdmap.SEND, false, 0, 1, 0, data, 0, 8);
                n += e.send(wire, n, Rdmap.SEND_SOLICITED, true, 0, 1, 8, data, 8, 8);
                assertEquals(List.of(Rdmap.TERMINATE + " 2060000"), answer(raw, wire.asSlice(0, n)));
            }
            assertEquals(List.of(TestQp.Wc.recv(1, WcStatus.GENERAL_ERR, 0), TestQp.Wc.flushed(2, WcOpcode.RECV)),
                    p.b.next(2));
        }
    }

    /** Connects a raw socket as MPA initiator to the pair's listener; B accepts and posts receives. */
    private static SocketChannel establishRaw(AgentPair p, long... receives) throws Exception {
        CompletableFuture<Void> accepted = p.requests.thenAccept(c -> {
            c.accept(p.b.qp(4), 1, 1, NONE);
            for (long id : receives) {
                c.postRecv(id, TestQp.slices(64));
            }
        });
        SocketChannel raw = SocketChannel.open(p.listener.localAddress());
        MpaInitiator initiator = new MpaInitiator(MpaConfig.siwDefaults(), 1, 1, NONE, "the agent");
        CompletableFuture<Void> setup = CompletableFuture.runAsync(() -> {
            try {
                MpaSocketDriver.drive(initiator, raw, System::nanoTime);
            } catch (java.io.IOException ex) {
                throw new java.io.UncheckedIOException(ex);
            }
        });
        AgentPair.await(accepted);
        AgentPair.await(setup);
        assertNotNull(initiator.connection(), String.valueOf(initiator.failure()));
        raw.configureBlocking(true);
        return raw;
    }

    /** Writes the bytes, reads until the agent closes, and names each FPDU that came back. */
    private static List<String> answer(SocketChannel raw, MemorySegment bytes) throws Exception {
        MpaLoopback.write(raw, bytes.toArray(ValueLayout.JAVA_BYTE));
        byte[] back = MpaLoopback.readToEnd(raw);
        List<String> fpdus = new ArrayList<>();
        new FpduReassembler(65535, false, f -> fpdus.add(f.opcode() + " "
                + Integer.toHexString(Terminate.controlWord(f.segment(), f.offset()))))
                .receive(MemorySegment.ofArray(back), 0, back.length);
        return fpdus;
    }
}
