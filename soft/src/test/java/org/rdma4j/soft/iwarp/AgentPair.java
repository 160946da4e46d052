// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Two agents in one JVM, one per side, and a connection between them over 127.0.0.1: side A connects,
 * side B listens on an ephemeral port and accepts. Waits are bounded (30 s) so a broken transport fails
 * the test instead of hanging it.
 */
final class AgentPair implements AutoCloseable {
    static final int DEPTH = 64;

    final IwarpAgent agentA;
    final IwarpAgent agentB;
    final TestQp a = new TestQp();
    final TestQp b = new TestQp();
    final IwarpListener listener;
    final CompletableFuture<IwarpConnection> requests = new CompletableFuture<>();
    IwarpConnection ca;
    IwarpConnection cb;

    AgentPair() throws Exception {
        agentA = new IwarpAgent("iwarp-test-a");
        agentB = new IwarpAgent("iwarp-test-b");
        listener = agentB.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), MpaConfig.siwDefaults(),
                requests::complete);
    }

    /** Connects and accepts; returns once both ends are established. */
    AgentPair connect(int ird, int ord, byte[] fromA, byte[] fromB) throws Exception {
        ca = agentA.connect(listener.localAddress(), MpaConfig.siwDefaults(), ird, ord, fromA, a.qp(DEPTH),
                IwarpAgent.DEFAULT_CONNECT_TIMEOUT_NS);
        cb = await(requests);
        cb.accept(b.qp(DEPTH), ird, ord, fromB);
        await(ca.established());
        await(cb.established());
        return this;
    }

    static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws Exception {
        agentA.close();
        agentB.close();
        listener.close();
    }
}
