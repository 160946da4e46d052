// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.examples.pingpong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.examples.pingpong.PingPong.Settings;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;

/**
 * The seed's four ping-pongs, each a server and a client on threads of this JVM connected by rdma4j's
 * connection manager over two soft devices: on the in-process fabric and over RoCEv2/UDP between
 * 127.0.0.83 and 127.0.0.84 (distinct UDP ports, each device sending to the other's). Both sides
 * check every ping and pong byte for byte, the WRITE/READ server also the last ping in its buffer.
 */
class PingPongExamplesTest {
    private static final AtomicInteger PORTS = new AtomicInteger(7_600 + (int) (ProcessHandle.current().pid() % 300));
    private static ExecutorService pool;
    private static Device loopA;
    private static Device loopB;
    private static Device udpA;
    private static Device udpB;

    enum Example {
        SEND_RECV_BUSY_POLL(SendRecvBusyPoll.program()),
        SEND_RECV_WAIT(SendRecvWait.program()),
        WRITE_READ_SIGNALED(WriteReadSignaled.program()),
        WRITE_UNSIGNALED_READ_SIGNALED(WriteUnsignaledReadSignaled.program());

        final PingPong.Program program;

        Example(PingPong.Program program) {
            this.program = program;
        }
    }

    @BeforeAll
    static void devices() {
        loopA = Verbs.createDevice("soft:loopback?name=ppA&fabric=pp");
        loopB = Verbs.createDevice("soft:loopback?name=ppB&fabric=pp");
        int base = 31_000 + (int) (ProcessHandle.current().pid() % 2000) * 2;
        udpA = Verbs.createDevice("soft:udp?name=ppuA&addr=127.0.0.83&port=" + base + "&peer-port=" + (base + 1));
        udpB = Verbs.createDevice("soft:udp?name=ppuB&addr=127.0.0.84&port=" + (base + 1) + "&peer-port=" + base);
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "pingpong-example");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterAll
    static void removeDevices() throws InterruptedException {
        pool.shutdownNow();
        for (Device d : new Device[] {loopA, loopB, udpA, udpB}) {
            // a closed connection's id lingers through its time wait (an ACK timeout, 67 ms) holding the
            // device's context: removal is refused (EBUSY) until then
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (true) {
                try {
                    Verbs.removeDevice(d);
                    break;
                } catch (org.rdma4j.verbs.VerbsException e) {
                    if (e.errno() != org.rdma4j.verbs.Errno.EBUSY || System.nanoTime() - deadline > 0) {
                        throw e;
                    }
                    Thread.sleep(10);
                }
            }
        }
    }

    private static InetAddress ip(Device d) {
        try (Context c = d.open()) {
            return c.queryGid(1, 1).toInetAddress();
        }
    }

    /** Starts {@code server}, returns once it says it listens (bounded), failing if it ended first. */
    private static Future<Integer> startServer(Callable<Integer> server, ByteArrayOutputStream out) throws Exception {
        Future<Integer> f = pool.submit(server);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!out.toString(StandardCharsets.UTF_8).contains("listening on")) {
            if (f.isDone()) {
                f.get(); // its failure
                fail("the server ended before listening");
            }
            if (System.nanoTime() - deadline > 0) {
                fail("the server did not listen within 30 s");
            }
            Thread.sleep(5);
        }
        return f;
    }

    /** Runs server and client; returns what each verified: {server, client}. */
    private static int[] run(PingPong.Program p, Device clientDev, Device serverDev, int iterations, int size)
            throws Exception {
        InetSocketAddress at = new InetSocketAddress(ip(serverDev), PORTS.incrementAndGet());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Settings ss = new Settings(iterations, size, null, Duration.ofSeconds(20), new PrintStream(out, true));
        Settings cs = new Settings(iterations, size, ip(clientDev), Duration.ofSeconds(20), null);
        Future<Integer> server = startServer(() -> p.server(at, ss), out);
        Future<Integer> client = pool.submit(() -> p.client(at, cs));
        return new int[] {server.get(60, TimeUnit.SECONDS), client.get(60, TimeUnit.SECONDS)};
    }

    @ParameterizedTest
    @EnumSource(Example.class)
    void overTheInProcessFabric(Example e) throws Exception {
        int[] done = run(e.program, loopA, loopB, 300, 100);
        assertEquals(300, done[0], "server");
        assertEquals(300, done[1], "client");
    }

    @ParameterizedTest
    @EnumSource(Example.class)
    void overUdpBetweenTwoLoopbackAddresses(Example e) throws Exception {
        int[] done = run(e.program, udpA, udpB, 100, 4096);
        assertEquals(100, done[0], "server");
        assertEquals(100, done[1], "client");
    }

    @Test
    void aServerWhosePingsDoNotFitFails() throws Exception {
        // a client sending 32-byte pings to a server expecting 64: the server's checks must notice
        InetSocketAddress at = new InetSocketAddress(ip(loopB), PORTS.incrementAndGet());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Settings ss = new Settings(5, 64, null, Duration.ofSeconds(20), new PrintStream(out, true));
        Settings cs = new Settings(5, 32, ip(loopA), Duration.ofSeconds(5), null);
        Future<Integer> server = startServer(() -> SendRecvWait.server(at, ss), out);
        Future<Integer> client = pool.submit(() -> SendRecvWait.client(at, cs));
        ExecutionException s = assertThrows(ExecutionException.class, () -> server.get(60, TimeUnit.SECONDS));
        assertTrue(s.getCause().getMessage().contains("ping 0 has 32 bytes"), () -> s.getCause().toString());
        // the client's pong never comes. The server's endpoint closed: a DREQ (as on the kernel's CM) gives
        // the client a DISCONNECTED event and leaves its QP in RTS, so the program, which waits only on its
        // CQ, ends at its own step timeout; in some runs the client's QP reaches ERROR first and the
        // receive is flushed. Either way the client fails, and within its timeout
        ExecutionException c = assertThrows(ExecutionException.class, () -> client.get(60, TimeUnit.SECONDS));
        String why = String.valueOf(c.getCause().getMessage());
        assertTrue(why.matches("ETIMEDOUT: get receive completion with .*: none within 5 s")
                || why.contains("RECV completed with WR_FLUSH_ERR"),
                () -> c.getCause().toString());
    }
}
