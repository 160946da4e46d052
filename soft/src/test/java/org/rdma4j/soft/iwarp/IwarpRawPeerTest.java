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
            CompletableFuture<Void> accepted = p.requests.thenAccept(c -> {
                c.accept(p.b.qp(4), 1, 1, NONE);
                c.postRecv(1, TestQp.slices(64));
            });
            try (SocketChannel raw = SocketChannel.open(p.listener.localAddress())) {
                MpaInitiator initiator = new MpaInitiator(MpaConfig.siwDefaults(), 1, 1, NONE, "the agent");
                CompletableFuture<Void> setup = CompletableFuture.runAsync(() -> {
                    try {
                        MpaSocketDriver.drive(initiator, raw, System::nanoTime);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                AgentPair.await(accepted);
                AgentPair.await(setup);
                assertNotNull(initiator.connection(), String.valueOf(initiator.failure()));
                MemorySegment wire = MemorySegment.ofArray(new byte[1024]);
                int n = new FpduEncoder(false).tagged(wire, 0, Rdmap.RDMA_WRITE, true, 0x44, 90,
                        RdmapLoopbackTest.bytes(64, 4), 0, 64);
                byte[] junk = new byte[512];
                new SplittableRandom(27).nextBytes(junk);
                MemorySegment.copy(MemorySegment.ofArray(junk), 0, wire, n, junk.length);
                raw.configureBlocking(true);
                MpaLoopback.write(raw, wire.asSlice(0, n + junk.length).toArray(ValueLayout.JAVA_BYTE));
                byte[] back = MpaLoopback.readToEnd(raw);
                List<String> fpdus = new ArrayList<>();
                new FpduReassembler(65535, false, f -> fpdus.add(f.opcode() + " "
                        + Integer.toHexString(Terminate.controlWord(f.segment(), f.offset()))))
                        .receive(MemorySegment.ofArray(back), 0, back.length);
                assertEquals(List.of(Rdmap.TERMINATE + " 1101c000"), fpdus);
            }
            assertEquals(TestQp.Wc.flushed(1, WcOpcode.RECV), p.b.next());
            assertTrue(AgentPair.await(p.requests.join().ended()).contains("a Terminate was sent"));
            assertTrue(target.guardsIntact());
            assertFalse(target.window.elements(ValueLayout.JAVA_BYTE).anyMatch(x -> x.get(ValueLayout.JAVA_BYTE, 0) != 0));
        }
    }
}
