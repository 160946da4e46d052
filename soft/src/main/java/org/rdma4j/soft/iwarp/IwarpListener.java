// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.function.Consumer;

/**
 * A listening TCP socket of an {@link IwarpAgent}: each connection it accepts runs the MPA responder and,
 * once the peer's request is in, is handed to the program ({@code onRequest}, on the agent thread, must
 * not block) to {@link IwarpConnection#accept} or {@link IwarpConnection#reject}. Closing stops accepting;
 * connections already accepted go on. Thread safe.
 */
public final class IwarpListener implements AutoCloseable {
    final ServerSocketChannel server;
    final MpaConfig config;
    final Consumer<IwarpConnection> onRequest;

    IwarpListener(ServerSocketChannel server, MpaConfig config, Consumer<IwarpConnection> onRequest) {
        this.server = server;
        this.config = config;
        this.onRequest = onRequest;
    }

    /** {@return the address it listens on (with the port chosen when 0 was asked for)} */
    public InetSocketAddress localAddress() {
        try {
            return (InetSocketAddress) server.getLocalAddress();
        } catch (IOException e) {
            throw new IllegalStateException("the listener is closed", e);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
