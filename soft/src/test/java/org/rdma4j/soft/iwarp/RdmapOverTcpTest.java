// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sender and receiver over a real TCP connection on 127.0.0.1 (non-blocking channels, small socket
 * buffers so writes are often partial and reads cut FPDUs anywhere), and a hostile raw peer.
 */
class RdmapOverTcpTest {
    private ServerSocketChannel server;
    private SocketChannel left;
    private SocketChannel right;
    private Selector selector;

    @BeforeEach
    void connect() throws IOException {
        server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        left = SocketChannel.open(server.getLocalAddress());
        right = server.accept();
        selector = Selector.open();
        for (SocketChannel c : List.of(left, right)) {
            c.setOption(StandardSocketOptions.SO_SNDBUF, 4096);
            c.setOption(StandardSocketOptions.SO_RCVBUF, 4096);
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            c.configureBlocking(false);
            c.register(selector, SelectionKey.OP_READ);
        }
    }

    @AfterEach
    void close() throws IOException {
        for (var c : List.of(left, right, server, selector)) {
            c.close();
        }
    }

    /** One side's socket plumbing: what the QP engine would do with the sender and receiver. */
    private static final class Side {
        final Peer peer;
        final SocketChannel channel;
        final ByteBuffer out = ByteBuffer.allocateDirect(3000);
        final ByteBuffer in = ByteBuffer.allocateDirect(2000);
        final MemorySegment inSegment = MemorySegment.ofBuffer(in);

        Side(Peer peer, SocketChannel channel) {
            this.peer = peer;
            this.channel = channel;
        }

        boolean step() throws IOException {
            int filled = 0;
            while (out.hasRemaining() && peer.startWork()) {
                int n = peer.sender.fill(out);
                if (n == 0) {
                    break;
                }
                filled += n;
            }
            out.flip();
            int wrote = channel.write(out);
            out.compact();
            in.clear();
            int read = channel.read(in);
            if (read > 0) {
                peer.receiver.receive(inSegment, 0, read);
            }
            return filled + wrote + Math.max(read, 0) > 0;
        }
    }

    private void pump(Side a, Side b, BooleanSupplier done) throws IOException {
        int idle = 0;
        while (!done.getAsBoolean()) {
            boolean moved = a.step() | b.step();
            idle = moved ? 0 : idle + 1;
            assertTrue(idle < 200, "no progress: the exchange is stuck");
            if (!moved) {
                selector.select(50);
                selector.selectedKeys().clear();
            }
        }
    }

    @Test
    void sendsWritesAndReadsCrossALoopbackTcpConnectionIntact() throws IOException {
        Peer a = new Peer(true, 1460, 2, 2);
        Peer b = new Peer(true, 1460, 2, 2);
        MemorySegment big = RdmapLoopbackTest.bytes(100_000, 1);
        MemorySegment[] slices = b.device.post(1, 7, 50_000, 49_993);
        b.device.post(2, 1);
        FakeDevice.Region target = b.device.register(0x11, 70_000, 0x9000, StagResolver.Use.REMOTE_WRITE);
        FakeDevice.Region source = b.device.register(0x22, 20_000, 0, StagResolver.Use.REMOTE_READ);
        source.window.copyFrom(RdmapLoopbackTest.bytes(20_000, 2));
        FakeDevice.Region sink = a.device.register(0x33, 20_000, 0, StagResolver.Use.LOCAL_WRITE);
        MemorySegment writeData = RdmapLoopbackTest.bytes(65_000, 3);
        a.outbox.add(s -> s.send(Rdmap.SEND, 0, new MemorySegment[] {big}, 1));
        a.outbox.add(s -> s.write(0x11, 0x9000 + 5000, new MemorySegment[] {writeData}, 1));
        a.outbox.add(s -> s.readRequest(0x33, 0, 20_000, 0x22, 0, 7));
        a.outbox.add(s -> s.send(Rdmap.SEND_SOLICITED, 0, new MemorySegment[] {big.asSlice(0, 1)}, 1));
        pump(new Side(a, left), new Side(b, right), () -> b.device.sends.size() == 2 && a.device.readsDone.size() == 1);
        assertEquals(List.of(new FakeDevice.SendDone(1, 100_000, Rdmap.SEND, 0),
                new FakeDevice.SendDone(2, 1, Rdmap.SEND_SOLICITED, 0)), b.device.sends);
        assertArrayEquals(big.toArray(ValueLayout.JAVA_BYTE), RdmapLoopbackTest.concat(slices, 100_000));
        assertArrayEquals(writeData.toArray(ValueLayout.JAVA_BYTE),
                target.window.asSlice(5000, 65_000).toArray(ValueLayout.JAVA_BYTE));
        assertArrayEquals(source.window.toArray(ValueLayout.JAVA_BYTE), sink.window.toArray(ValueLayout.JAVA_BYTE));
        assertTrue(target.guardsIntact() && sink.guardsIntact());
        assertTrue(!a.receiver.stopped() && !b.receiver.stopped());
    }

    @Test
    void aRawPeerWritingPastAWindowGetsATaggedBoundsTerminateBack() throws IOException {
        Peer b = new Peer(false, 1460, 1, 1);
        FakeDevice.Region target = b.device.register(0x44, 100, 0, StagResolver.Use.REMOTE_WRITE);
        MemorySegment wire = MemorySegment.ofArray(new byte[512]);
        int n = new FpduEncoder(false).tagged(wire, 0, Rdmap.RDMA_WRITE, true, 0x44, 90, RdmapLoopbackTest.bytes(64, 4), 0, 64);
        ByteBuffer hostile = wire.asSlice(0, n).asByteBuffer();
        List<String> back = new ArrayList<>();
        FpduReassembler decoder = new FpduReassembler(65535, false,
                f -> back.add(f.opcode() + " " + Integer.toHexString(Terminate.controlWord(f.segment(), f.offset()))));
        ByteBuffer in = ByteBuffer.allocate(256);
        Side side = new Side(b, right);
        pump(side, side, () -> {
            try {
                left.write(hostile);
                in.clear();
                int got = left.read(in);
                if (got > 0) {
                    decoder.receive(MemorySegment.ofArray(in.array()), 0, got);
                }
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            return !back.isEmpty();
        });
        assertEquals(List.of(Rdmap.TERMINATE + " 1101c000"), back);
        assertTrue(b.receiver.stopped() && b.sender.terminated());
        assertTrue(target.guardsIntact());
        assertTrue(target.window.elements(ValueLayout.JAVA_BYTE).allMatch(x -> x.get(ValueLayout.JAVA_BYTE, 0) == 0));
    }
}
