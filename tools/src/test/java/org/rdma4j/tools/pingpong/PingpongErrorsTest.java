// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rdma4j.tools.pingpong.PingpongRun.Pair;
import org.rdma4j.verbs.Verbs;

/** Bad command lines, bad peers and unreachable servers: a clear message, exit 1, no hang. */
class PingpongErrorsTest {
    @BeforeAll
    static void peer() {
        PingpongRun.ensurePeer();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            rc -m 1000                 | -m 1000: the path MTU must be 256, 512, 1024, 2048 or 4096
            rc -p 70000                | -p 70000: the port must be 0..65535
            rc -i 0                    | -i 0: the IB port must be 1 or more
            rc -s abc                  | 'abc' is not a number
            rc -n -5                   | -n -5: the number of exchanges must be 0 or more
            rc --frobnicate            | Unknown option: '--frobnicate'
            rc host1 host2             | Unmatched argument
            ud -m 1024                 | Unknown option: '-m'
            rc -q 4                    | Unknown option: '-q'
            srq -s 0                   | -s 0: the size must be 1 or more
            rc --bind not..an..address | --bind
            rc --bind 127.0.0.1 --udp-port 0 | --udp-port 0 is outside 1..65535
            """)
    void badFlagsAreUsageErrorsWithExitCode1(String args, String message) {
        List<String> a = PingpongRun.args("pingpong");
        a.addAll(List.of(args.split(" ")));
        PingpongRun r = PingpongRun.of(a.toArray(String[]::new));
        assertEquals(1, r.exitCode(), r::toString);
        assertTrue(r.err().contains(message), r::toString);
        assertTrue(r.err().contains("try 'rdma4j pingpong " + a.get(1) + " --help'"), r::toString);
        assertFalse(r.err().contains("\tat "), r::toString);
        assertEquals("", r.out(), r::toString);
    }

    @Test
    void noTransportIsAUsageError() {
        PingpongRun r = PingpongRun.of("pingpong");
        assertEquals(1, r.exitCode(), r::toString);
        assertTrue(r.err().contains("Missing transport"), r::toString);
    }

    @Test
    void helpListsTheTransports() {
        PingpongRun r = PingpongRun.of("pingpong", "--help");
        assertEquals(0, r.exitCode(), r::toString);
        for (String t : new String[] {"rc", "uc", "ud", "srq"}) {
            assertTrue(r.out().contains("  " + t + " "), r::toString);
        }
        PingpongRun top = PingpongRun.of("--help");
        assertTrue(top.out().contains("  pingpong "), top::toString);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            srq -q 600              | rx_depth 500 is too small for 600 QPs -- must have at least one receive per QP.
            srq -q 300 -r 1000      | num_qp 300 must be less than 255
            rc -d nosuch0           | IB device nosuch0 not found
            ud -s 8192              | Requested size larger than port MTU (4096)
            rc -i 2 -g 1            | Failed to modify QP to INIT
            """)
    void failuresBeforeTheExchangePrintTheCToolsMessage(String args, String message) {
        List<String> a = PingpongRun.args("pingpong");
        a.addAll(List.of(args.split(" ")));
        a.addAll(List.of("-p", String.valueOf(PingpongRun.freePort())));
        PingpongRun r = PingpongRun.of(a.toArray(String[]::new));
        assertEquals(1, r.exitCode(), r::toString);
        assertEquals(message, r.err().lines().findFirst().orElse(""), r::toString);
        assertFalse(r.err().contains("\tat "), r::toString);
    }

    @Test
    void connectionRefusedIsAClearError() {
        int port = PingpongRun.freePort();
        PingpongRun r = PingpongRun.of("pingpong", "rc", "-g", "1", "-p", String.valueOf(port), "localhost");
        assertEquals(1, r.exitCode(), r::toString);
        assertTrue(r.err().startsWith("Couldn't connect to localhost:" + port + "\n"), r::toString);
        assertTrue(r.err().contains("rdma4j: Connection refused"), r::toString);
        assertTrue(r.out().contains("  local address:  LID 0x0000"), r::toString);
    }

    @Test
    void serverRejectsAMalformedAddressLine() throws Exception {
        int port = PingpongRun.freePort();
        CompletableFuture<PingpongRun> server = serve("rc", port);
        try (Socket s = connect(port)) {
            byte[] junk = new byte[Dest.WIRE_BYTES];
            byte[] text = "hello, this is not an address".getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(text, 0, junk, 0, text.length);
            s.getOutputStream().write(junk);
            PingpongRun r = server.get(30, TimeUnit.SECONDS);
            assertEquals(1, r.exitCode(), r::toString);
            assertEquals("Invalid remote address: \"hello, this is not an address\" is not LID:QPN:PSN:GID",
                    r.err().lines().findFirst().orElse(""), r::toString);
            assertEquals(-1, s.getInputStream().read(), "the server closes the connection without answering");
        }
    }

    @Test
    void serverGivesUpOnAClientThatStalls() throws Exception {
        int port = PingpongRun.freePort();
        CompletableFuture<PingpongRun> server = serve("srq", port, "--exchange-timeout", "1");
        try (Socket s = connect(port)) {
            // one whole address and a piece of the next, then nothing
            s.getOutputStream().write(new Dest(0, 0x11, 0x22, org.rdma4j.verbs.Gid.ZERO).toWire());
            s.getOutputStream().write("0000:00".getBytes(StandardCharsets.US_ASCII));
            long t0 = System.nanoTime();
            PingpongRun r = server.get(30, TimeUnit.SECONDS);
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10), "the timeout took too long");
            assertEquals(1, r.exitCode(), r::toString);
            List<String> lines = r.err().lines().toList();
            assertTrue(lines.get(0).startsWith("server read: timed out after 1.0 s"), r::toString);
            assertEquals("7/52: Couldn't read remote address [1]", lines.get(1), r::toString);
        }
    }

    @Test
    void serverReportsAClientThatHangsUpEarly() throws Exception {
        int port = PingpongRun.freePort();
        CompletableFuture<PingpongRun> server = serve("uc", port);
        try (Socket s = connect(port)) {
            s.getOutputStream().write("0000:0000".getBytes(StandardCharsets.US_ASCII));
        }
        PingpongRun r = server.get(30, TimeUnit.SECONDS);
        assertEquals(1, r.exitCode(), r::toString);
        assertEquals(List.of("server read: connection closed by the peer", "9/52: Couldn't read remote address"),
                r.err().lines().toList(), r::toString);
    }

    @Test
    void clientRejectsAMalformedReply() throws Exception {
        try (ServerSocket fake = new ServerSocket(0)) {
            CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                try (Socket c = fake.accept()) {
                    InputStream in = c.getInputStream();
                    in.readNBytes(Dest.WIRE_BYTES);
                    OutputStream out = c.getOutputStream();
                    byte[] reply = new byte[Dest.WIRE_BYTES];
                    byte[] text = "0000:zzzzzz:000000:00000000000000000000000000000000".getBytes(StandardCharsets.US_ASCII);
                    System.arraycopy(text, 0, reply, 0, text.length);
                    out.write(reply);
                    in.readAllBytes();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            PingpongRun r = PingpongRun.of("pingpong", "rc", "-g", "1", "-d", PingpongRun.PEER, "-p",
                    String.valueOf(fake.getLocalPort()), "127.0.0.1");
            assertEquals(1, r.exitCode(), r::toString);
            assertTrue(r.err().startsWith("Invalid remote address: \"0000:zzzzzz:"), r::toString);
            peer.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void getoptStyleRepeatsAndClustersAreAccepted() {
        int port = PingpongRun.freePort();
        Pair p = PingpongRun.pair(
                PingpongRun.args("rc", "-p", "1", "-p", String.valueOf(port), "-ee", "-c", "-g1", "-n", "0x20", "-s", "010"),
                PingpongRun.args("rc", "-p", String.valueOf(port), "-ec", "-g", "1", "-n", "32", "-s", "8",
                        "--ib-dev=" + PingpongRun.PEER, "localhost"));
        assertEquals(0, p.server().exitCode(), p::toString);
        assertEquals(0, p.client().exitCode(), p::toString);
        assertTrue(p.server().out().contains("\n512 bytes in "), "-s 010 is octal 8, -n 0x20 is 32\n" + p);
        assertTrue(p.client().out().contains("\n32 iters in "), p::toString);
    }

    /** --bind: two soft UDP devices on 127.0.0.1, sending to each other's port. */
    @Test
    void bindRunsOverUdp() throws Exception {
        int portA;
        int portB;
        try (DatagramSocket a = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             DatagramSocket b = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            portA = a.getLocalPort();
            portB = b.getLocalPort();
        }
        for (String t : new String[] {"rc", "ud"}) {
            int port = PingpongRun.freePort();
            Pair p = PingpongRun.pair(
                    PingpongRun.args(t, "-p", String.valueOf(port), "-g", "1", "-n", "50", "-c", "-s", "2048",
                            "--bind", "127.0.0.1", "--udp-port", String.valueOf(portA), "--udp-peer-port",
                            String.valueOf(portB), "-d", "pp-udp-a"),
                    PingpongRun.args(t, "-p", String.valueOf(port), "-g", "1", "-n", "50", "-c", "-s", "2048",
                            "--bind", "127.0.0.1", "--udp-port", String.valueOf(portB), "--udp-peer-port",
                            String.valueOf(portA), "-d", "pp-udp-b", "localhost"));
            assertEquals(0, p.server().exitCode(), p::toString);
            assertEquals(0, p.client().exitCode(), p::toString);
            assertTrue(p.server().out().contains("GID ::ffff:127.0.0.1"), p::toString);
            assertTrue(p.client().out().contains("\n50 iters in "), p::toString);
            // each run removes the device it created, so the names and ports are free again
            assertTrue(Verbs.devices().stream().noneMatch(d -> d.name().startsWith("pp-udp-")), p::toString);
        }
    }

    private static CompletableFuture<PingpongRun> serve(String transport, int port, String... more) {
        List<String> a = PingpongRun.args("pingpong", transport, "-g", "1", "-p", String.valueOf(port));
        a.addAll(List.of(more));
        return CompletableFuture.supplyAsync(() -> PingpongRun.of(a.toArray(String[]::new)));
    }

    /** Connects to a pingpong server that may not be listening yet. */
    private static Socket connect(int port) throws Exception {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        for (;;) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
                s.setSoTimeout(30_000);
                return s;
            } catch (IOException e) {
                s.close();
                if (System.nanoTime() > giveUp) {
                    throw e;
                }
                Thread.sleep(20);
            }
        }
    }
}
