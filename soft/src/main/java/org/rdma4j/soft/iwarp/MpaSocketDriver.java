// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Drives an {@link MpaEngine} over a non-blocking TCP channel with a selector of its own, on the calling
 * thread, until the engine is {@link MpaEngine#idle() idle}: established, failed, rejected, or (responder)
 * waiting for the program's accept or reject, after which {@link #drive} is called again. The engine's
 * deadline bounds every wait, so a call never blocks longer than the setup's timeout. For a device whose
 * connections share one selector agent, the agent moves the bytes itself, as this class shows.
 * Stateless; each call uses its own selector.
 */
public final class MpaSocketDriver {
    private MpaSocketDriver() {
    }

    /**
     * Runs the engine until it is idle.
     *
     * @param engine  the engine
     * @param channel a connected channel; it is made non-blocking
     * @param clock   the nanosecond clock the engine's deadlines count in (e.g. {@code System::nanoTime})
     * @throws IOException if the selector cannot be opened
     */
    public static void drive(MpaEngine engine, SocketChannel channel, LongSupplier clock) throws IOException {
        channel.configureBlocking(false);
        try (Selector selector = Selector.open()) {
            SelectionKey key = channel.register(selector, 0);
            engine.advance(clock.getAsLong());
            while (!engine.idle()) {
                try {
                    if (engine.outbox().hasRemaining()) {
                        channel.write(engine.outbox());
                    }
                    if (engine.wantsRead() && channel.read(engine.inbox()) < 0) {
                        engine.peerClosed();
                    }
                } catch (IOException e) {
                    engine.socketFailed(e);
                }
                engine.advance(clock.getAsLong());
                if (engine.idle()) {
                    break;
                }
                int ops = (engine.outbox().hasRemaining() ? SelectionKey.OP_WRITE : 0)
                        | (engine.wantsRead() ? SelectionKey.OP_READ : 0);
                key.interestOps(ops);
                long waitNs = engine.deadlineNs() == Long.MAX_VALUE ? TimeUnit.SECONDS.toNanos(1)
                        : engine.deadlineNs() - clock.getAsLong();
                if (waitNs > 0) {
                    selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNs + 999_999)));
                }
                selector.selectedKeys().clear();
            }
            key.cancel();
        }
    }
}
