// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.tools.text.HostileBytes;
import org.rdma4j.verbs.Gid;

/**
 * pingpong against a hostile or vanishing peer on loopback (a plain socket that speaks the TCP exchange
 * as far as it likes): what the peer sent is printed with its control characters replaced, and with
 * --stall-timeout a server whose client is gone after the exchange stops and says what it waited for.
 */
@Timeout(120)
class PingpongHostilePeerTest {
    @BeforeAll
    static void peer() {
        PingpongRun.ensurePeer();
    }

    private static CompletableFuture<PingpongRun> serve(int port, String... more) {
        List<String> a = PingpongRun.args("pingpong", "rc", "-g", "1", "-p", String.valueOf(port));
        a.addAll(List.of(more));
        return CompletableFuture.supplyAsync(() -> PingpongRun.of(a.toArray(String[]::new)));
    }

    /** Connects to a pingpong server that may not be listening yet. */
    private static Socket connect(int port) throws Exception {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
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

    @Test
    void aServerPrintsAHostileAddressLineWithoutControlCharacters() throws Exception {
        int port = PingpongRun.freePort();
        CompletableFuture<PingpongRun> server = serve(port);
        try (Socket s = connect(port)) {
            s.getOutputStream().write(HostileBytes.message("0000:", Dest.WIRE_BYTES));
            PingpongRun r = server.get(60, TimeUnit.SECONDS);
            assertEquals(1, r.exitCode(), r::toString);
            assertTrue(r.err().contains("Invalid remote address: \"0000:?[2J???(???x\" is not LID:QPN:PSN:GID"),
                    r::toString);
            HostileBytes.assertNoControlCharacters(r.out() + r.err());
        }
    }

    @Test
    void aClientPrintsAHostileReplyWithoutControlCharacters() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                try (Socket c = fake.accept()) {
                    InputStream in = c.getInputStream();
                    in.readNBytes(Dest.WIRE_BYTES);
                    c.getOutputStream().write(HostileBytes.message("0000:000011:", Dest.WIRE_BYTES));
                    in.readAllBytes();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            PingpongRun r = PingpongRun.of("pingpong", "rc", "-g", "1", "-d", PingpongRun.PEER, "-p",
                    String.valueOf(fake.getLocalPort()), "127.0.0.1");
            assertEquals(1, r.exitCode(), r::toString);
            assertTrue(r.err().startsWith("Invalid remote address: \"0000:000011:?[2J???(???x\""), r::toString);
            HostileBytes.assertNoControlCharacters(r.out() + r.err());
            peer.get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * The server names a QP that does not exist (on the client's own device, which drops what comes
     * to an unknown QPN): the first send is never acknowledged and completes with retry exceeded, which
     * the client reports as ibv_rc_pingpong does, then with the port's counters.
     */
    @Test
    void aSendToAQueuePairThatIsNotThereFailsWithTheCToolsLinesAndTheCounters() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                try (Socket c = fake.accept()) {
                    DataInputStream in = new DataInputStream(c.getInputStream());
                    byte[] theirs = new byte[Dest.WIRE_BYTES];
                    in.readFully(theirs);
                    Dest client = Dest.parse(theirs);
                    c.getOutputStream().write(new Dest(0, 0xabcde, 0x123, client.gid()).toWire());
                    in.readAllBytes();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            PingpongRun r = PingpongRun.of("pingpong", "rc", "-g", "1", "-d", PingpongRun.PEER, "-p",
                    String.valueOf(fake.getLocalPort()), "127.0.0.1");
            assertEquals(1, r.exitCode(), r::toString);
            List<String> lines = r.err().lines().toList();
            assertEquals("Failed status transport retry counter exceeded (12) for wr_id 2", lines.get(0), r::toString);
            // the poll may return a flushed receive together with the failed send (ne = 2)
            assertTrue(lines.get(1).matches("parse WC failed [12]"), r::toString);
            assertTrue(lines.get(2).startsWith("counters:") && lines.get(2).contains("retr"), r::toString);
            peer.get(30, TimeUnit.SECONDS);
        }
    }

    /** The client completes the exchange (an address, "done") and then is gone: no packet ever comes. */
    @ParameterizedTest(name = "events {0}")
    @ValueSource(booleans = {false, true})
    void aServerWhoseClientVanishesAfterTheExchangeStopsAtTheStallTimeout(boolean events) throws Exception {
        int port = PingpongRun.freePort();
        CompletableFuture<PingpongRun> server = events ? serve(port, "--stall-timeout", "1", "-e")
                : serve(port, "--stall-timeout", "1");
        int clientPort;
        try (Socket s = connect(port)) {
            clientPort = s.getLocalPort();
            s.getOutputStream().write(new Dest(0, 0xabcde, 0x123, Gid.parse("::ffff:127.0.0.1")).toWire());
            new DataInputStream(s.getInputStream()).readFully(new byte[Dest.WIRE_BYTES]);
            s.getOutputStream().write(Exchange.DONE);
        }
        long t0 = System.nanoTime();
        PingpongRun r = server.get(60, TimeUnit.SECONDS);
        long took = System.nanoTime() - t0;
        assertEquals(1, r.exitCode(), r::toString);
        assertEquals("rdma4j: no completion for 1 s (--stall-timeout) while waiting for exchange 1 of 1000"
                + " (0 received, 0 sent) with 127.0.0.1:" + clientPort + " (QPN 0x0abcde)",
                r.err().lines().findFirst().orElse(""), r::toString);
        // a bound, not a benchmark: the C behaviour is to wait for ever
        assertTrue(took < TimeUnit.SECONDS.toNanos(10), took / 1e9 + " s\n" + r);
    }

    @Test
    void theHelpNamesTheStallTimeout() {
        PingpongRun r = PingpongRun.of("pingpong", "rc", "--help");
        assertTrue(r.out().contains("--stall-timeout=<seconds>"), r::toString);
        PingpongRun top = PingpongRun.of("pingpong", "--help");
        assertTrue(top.out().contains("--stall-timeout"), top::toString);
    }

    @Test
    void aNegativeStallTimeoutIsAUsageError() {
        PingpongRun r = PingpongRun.of("pingpong", "rc", "--stall-timeout", "-1");
        assertEquals(1, r.exitCode(), r::toString);
        assertTrue(r.err().contains("--stall-timeout -1 must be 0 (wait for ever) or a number of seconds"),
                r::toString);
    }
}
