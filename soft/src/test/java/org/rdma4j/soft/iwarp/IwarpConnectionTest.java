// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * Two {@link IwarpConnection}s over real loopback TCP, one {@link IwarpAgent} per side: connection setup
 * with private data, Sends into scatter lists, Write ordering, Reads under ORD, Send with Invalidate.
 */
class IwarpConnectionTest {
    private static final int MIB = 1 << 20;

    @Test
    void connectsWithPrivateDataBothWays() throws Exception {
        byte[] hello = "from the initiator".getBytes(StandardCharsets.US_ASCII);
        byte[] answer = "from the responder".getBytes(StandardCharsets.US_ASCII);
        try (AgentPair p = new AgentPair()) {
            p.connect(3, 5, hello, answer);
            assertArrayEquals(hello, p.cb.request().privateData());
            assertArrayEquals(answer, AgentPair.await(p.ca.established()).peerPrivateData());
            assertArrayEquals(hello, AgentPair.await(p.cb.established()).peerPrivateData());
            assertEquals(IwarpConnection.State.RTS, p.ca.state());
            assertEquals(IwarpConnection.State.RTS, p.cb.state());
        }
    }

    @Test
    void sendsOfZeroOneAndHundredThousandBytesLandInTheirScatterLists() throws Exception {
        try (AgentPair p = new AgentPair().connect(1, 1, new byte[0], new byte[0])) {
            MemorySegment[] empty = TestQp.slices();
            MemorySegment[] one = TestQp.slices(0, 1);
            MemorySegment[] big = TestQp.slices(7, 50_000, 49_993);
            p.cb.postRecv(1, empty);
            p.cb.postRecv(2, one);
            p.cb.postRecv(3, big);
            MemorySegment data = RdmapLoopbackTest.bytes(100_000, 9);
            p.ca.postSend(11, Rdmap.SEND, 0, new MemorySegment[0]);
            p.ca.postSend(12, Rdmap.SEND_SOLICITED, 0, new MemorySegment[] {data.asSlice(0, 1)});
            p.ca.postSend(13, Rdmap.SEND, 0, new MemorySegment[] {data.asSlice(0, 60_000), data.asSlice(60_000)});
            assertEquals(List.of(TestQp.Wc.send(11, WcStatus.SUCCESS, WcOpcode.SEND, 0),
                    TestQp.Wc.send(12, WcStatus.SUCCESS, WcOpcode.SEND, 1),
                    TestQp.Wc.send(13, WcStatus.SUCCESS, WcOpcode.SEND, 100_000)), p.a.next(3));
            assertEquals(List.of(TestQp.Wc.recv(1, WcStatus.SUCCESS, 0),
                    new TestQp.Wc(true, 2, WcStatus.SUCCESS, WcOpcode.RECV, 1, 0, true),
                    TestQp.Wc.recv(3, WcStatus.SUCCESS, 100_000)), p.b.next(3));
            assertEquals(data.get(ValueLayout.JAVA_BYTE, 0), one[1].get(ValueLayout.JAVA_BYTE, 0));
            assertArrayEquals(data.toArray(ValueLayout.JAVA_BYTE), RdmapLoopbackTest.concat(big, 100_000));
        }
    }

    @Test
    void aWriteIsInPlaceWhenTheSendPostedBehindItIsReceived() throws Exception {
        try (AgentPair p = new AgentPair()) {
            FakeDevice.Region target = p.b.device.register(0x11, 70_000, 0x9000, StagResolver.Use.REMOTE_WRITE);
            p.connect(1, 1, new byte[0], new byte[0]);
            p.cb.postRecv(5, TestQp.slices(4));
            MemorySegment data = RdmapLoopbackTest.bytes(65_000, 3);
            p.ca.postWrite(1, 0x11, 0x9000 + 5000, new MemorySegment[] {data});
            p.ca.postSend(2, Rdmap.SEND, 0, TestQp.slices(4));
            assertEquals(TestQp.Wc.recv(5, WcStatus.SUCCESS, 4), p.b.next());
            assertArrayEquals(data.toArray(ValueLayout.JAVA_BYTE),
                    target.window.asSlice(5000, 65_000).toArray(ValueLayout.JAVA_BYTE));
            assertTrue(target.guardsIntact());
            assertEquals(List.of(TestQp.Wc.send(1, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, 65_000),
                    TestQp.Wc.send(2, WcStatus.SUCCESS, WcOpcode.SEND, 4)), p.a.next(2));
        }
    }

    @Test
    void eightReadsOfOneMebibyteUnderOrdTwoCompleteInOrderWithTheirData() throws Exception {
        try (AgentPair p = new AgentPair()) {
            FakeDevice.Region source = p.b.device.register(0x22, MIB, 0x4000_0000L, StagResolver.Use.REMOTE_READ);
            source.window.copyFrom(RdmapLoopbackTest.bytes(MIB, 5));
            FakeDevice.Region sink = p.a.device.register(0x33, 8L * MIB, 0, StagResolver.Use.LOCAL_WRITE);
            // IRD 2 on B: a requester that ignored its ORD of 2 would get B's Terminate, not 8 completions
            p.connect(2, 2, new byte[0], new byte[0]);
            List<TestQp.Wc> expected = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                p.ca.postRead(100 + i, 0x33, (long) i * MIB, MIB, 0x22, 0x4000_0000L);
                expected.add(TestQp.Wc.send(100 + i, WcStatus.SUCCESS, WcOpcode.RDMA_READ, MIB));
            }
            assertEquals(expected, p.a.next(8));
            byte[] want = source.window.toArray(ValueLayout.JAVA_BYTE);
            for (int i = 0; i < 8; i++) {
                assertArrayEquals(want, sink.window.asSlice((long) i * MIB, MIB).toArray(ValueLayout.JAVA_BYTE));
            }
            assertTrue(sink.guardsIntact() && source.guardsIntact());
            assertEquals(IwarpConnection.State.RTS, p.cb.state());
        }
    }

    @Test
    void aSendWithInvalidateInvalidatesThePeersStagAndSaysSoInTheReceive() throws Exception {
        try (AgentPair p = new AgentPair()) {
            p.b.device.register(0x55, 64, 0, StagResolver.Use.REMOTE_WRITE);
            p.connect(1, 1, new byte[0], new byte[0]);
            p.cb.postRecv(7, TestQp.slices(16));
            p.ca.postSend(3, Rdmap.SEND_SOLICITED_INVALIDATE, 0x55, TestQp.slices(8));
            assertEquals(TestQp.Wc.send(3, WcStatus.SUCCESS, WcOpcode.SEND, 8), p.a.next());
            assertEquals(new TestQp.Wc(true, 7, WcStatus.SUCCESS, WcOpcode.RECV, 8, 0x55, true), p.b.next());
            assertFalse(p.b.device.regions.get(0x55).valid);
        }
    }

    @Test
    void oneAgentPerSideMovesSeveralConnectionsAtOnce() throws Exception {
        int n = 4;
        List<TestQp> passive = new CopyOnWriteArrayList<>();
        List<MemorySegment[]> landed = new CopyOnWriteArrayList<>();
        try (IwarpAgent agentA = new IwarpAgent("iwarp-test-many-a");
             IwarpAgent agentB = new IwarpAgent("iwarp-test-many-b");
             IwarpListener listener = agentB.listen(new InetSocketAddress(
                     InetAddress.getLoopbackAddress(), 0), MpaConfig.siwDefaults(), c -> {
                         TestQp qp = new TestQp();
                         c.accept(qp.qp(4), 1, 1, c.request().privateData());
                         MemorySegment[] into = TestQp.slices(1000);
                         c.postRecv(c.request().privateData()[0], into);
                         passive.add(qp);
                         landed.add(into);
                     })) {
            List<TestQp> active = new ArrayList<>();
            List<IwarpConnection> conns = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                TestQp qp = new TestQp();
                active.add(qp);
                conns.add(agentA.connect(listener.localAddress(), MpaConfig.siwDefaults(), 1, 1, new byte[] {(byte) i},
                        qp.qp(4), IwarpAgent.DEFAULT_CONNECT_TIMEOUT_NS));
            }
            for (int i = 0; i < n; i++) {
                assertArrayEquals(new byte[] {(byte) i}, AgentPair.await(conns.get(i).established()).peerPrivateData());
                conns.get(i).postSend(i, Rdmap.SEND, 0, new MemorySegment[] {RdmapLoopbackTest.bytes(1000, 40 + i)});
            }
            for (int i = 0; i < n; i++) {
                assertEquals(TestQp.Wc.send(i, WcStatus.SUCCESS, WcOpcode.SEND, 1000), active.get(i).next());
            }
            Set<Long> received = new HashSet<>();
            for (TestQp qp : passive) {
                TestQp.Wc wc = qp.next();
                assertEquals(TestQp.Wc.recv(wc.wrId(), WcStatus.SUCCESS, 1000), wc);
                received.add(wc.wrId());
            }
            assertEquals(Set.of(0L, 1L, 2L, 3L), received);
            Set<String> want = new HashSet<>();
            Set<String> got = new HashSet<>();
            for (int i = 0; i < n; i++) {
                want.add(Arrays.toString(RdmapLoopbackTest.bytes(1000, 40 + i).toArray(ValueLayout.JAVA_BYTE)));
                got.add(Arrays.toString(landed.get(i)[0].toArray(ValueLayout.JAVA_BYTE)));
            }
            assertEquals(want, got);
        }
    }
}
