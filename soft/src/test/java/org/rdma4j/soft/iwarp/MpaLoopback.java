// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * TCP connections over 127.0.0.1 on an ephemeral port, for MPA engines and hostile peers in one JVM. The
 * background side runs on a thread of its own; {@link #await} bounds the wait so a broken engine fails
 * the test instead of hanging it (a guard, not a timed assertion).
 */
final class MpaLoopback implements AutoCloseable {
    private final ServerSocketChannel server;
    private final List<SocketChannel> channels = new ArrayList<>();
    private final ExecutorService background = Executors.newSingleThreadExecutor();

    MpaLoopback() {
        try {
            server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@return a new connection: [0] the connecting side, [1] the accepted side, both blocking} */
    SocketChannel[] connect() throws IOException {
        SocketChannel client = SocketChannel.open(server.getLocalAddress());
        SocketChannel accepted = server.accept();
        client.socket().setTcpNoDelay(true);
        accepted.socket().setTcpNoDelay(true);
        channels.add(client);
        channels.add(accepted);
        return new SocketChannel[] {client, accepted};
    }

    static String peerOf(SocketChannel c) {
        try {
            return String.valueOf(c.getRemoteAddress());
        } catch (IOException e) {
            return "?";
        }
    }

    /** Drives an engine to idle on the background thread. */
    <E extends MpaEngine> Future<E> driveInBackground(E engine, SocketChannel channel) {
        return background.submit(() -> {
            MpaSocketDriver.drive(engine, channel, System::nanoTime);
            return engine;
        });
    }

    /** Runs a hostile peer's script on the background thread. */
    Future<byte[]> runInBackground(Script script) {
        return background.submit(script::run);
    }

    static <T> T await(Future<T> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    /** A hostile peer's actions; returns what it read. */
    @FunctionalInterface
    interface Script {
        byte[] run() throws Exception;
    }

    /** Writes all bytes on a blocking channel. */
    static void write(SocketChannel c, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    /**
     * Reads exactly {@code n} bytes from a blocking channel, fewer if it ends first or is reset (an engine
     * that gives up closes with the rest of a hostile frame unread, which TCP may answer with a reset).
     */
    static byte[] read(SocketChannel c, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        try {
            while (b.hasRemaining() && c.read(b) >= 0) {
                // keep reading
            }
        } catch (java.net.SocketException e) {
            // reset by the engine's close: what arrived before it is the answer
        }
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }

    /** Reads until the peer closes (at most 4096 bytes). */
    static byte[] readToEnd(SocketChannel c) throws IOException {
        return read(c, 4096);
    }

    @Override
    public void close() throws IOException {
        background.shutdownNow();
        for (SocketChannel c : channels) {
            c.close();
        }
        server.close();
    }
}
