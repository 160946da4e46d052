// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.tools.Rdma4j;

/**
 * {@code rdma4j stress --bind}: server and client in this JVM on two threads, RoCEv2 over real UDP
 * sockets on 127.0.0.1 and 127.0.0.2 (a free port, never 4791), the exchange over TCP.
 */
class RemoteStressTest {
    private static final Pattern CLEAN = Pattern.compile(
            "stress: messages=(\\d+) delivered=(\\d+) data_errors=0 duplicate_executions=0 retransmits=(\\d+)");
    private static final Pattern LAST = Pattern.compile(
            "stress: messages=(\\d+) delivered=(\\d+) data_errors=(\\d+) duplicate_executions=(\\d+) retransmits=(\\d+)");
    private static final long RUN_TIMEOUT_S = 120;

    /** One in-process run of {@code rdma4j ...}. */
    record Run(int exitCode, String out, String err) {
        static Run of(List<String> args) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            picocli.CommandLine cl = Rdma4j.commandLine();
            cl.setOut(new PrintWriter(out, true));
            cl.setErr(new PrintWriter(err, true));
            int code = cl.execute(args.toArray(String[]::new));
            return new Run(code, out.toString(), err.toString());
        }

        String last() {
            return out.lines().reduce((a, b) -> b).orElse("");
        }

        @Override
        public String toString() {
            return "exit " + exitCode + "\n--- out\n" + out + "--- err\n" + err;
        }
    }

    record Pair(Run server, Run client) {
        @Override
        public String toString() {
            return "=== server\n" + server + "\n=== client\n" + client;
        }
    }

    @AfterEach
    void resetHooks() {
        StressClient.testHashSkew = 0;
        StressClient.testReadSkew = 0;
    }

    @Test
    void lossyRunAcrossTwoEndpointsVerifiesEverythingOnBothSides() {
        Pair p = pair(List.of("--loss", "0.03", "--reorder", "0.03", "--dup", "0.01", "--corrupt", "0.001"),
                List.of("--loss", "0.03", "--reorder", "0.03", "--dup", "0.01", "--corrupt", "0.001",
                        "--messages", "400", "--seed", "11", "--max-size", "8192", "--mtu", "1024"));
        assertEquals(0, p.server().exitCode(), p::toString);
        assertEquals(0, p.client().exitCode(), p::toString);
        for (Run r : List.of(p.server(), p.client())) {
            Matcher m = CLEAN.matcher(r.last());
            assertTrue(m.matches(), "last line: " + r.last() + "\n" + p);
            assertEquals("400", m.group(1), p::toString);
            assertEquals("400", m.group(2), p::toString);
            assertTrue(r.out().contains("\nserver: receives="), p::toString);
            assertTrue(r.out().contains(" hashes=match atomics=match\n"), p::toString);
            assertEquals("", r.err(), p::toString);
        }
        assertEquals(p.server().last(), p.client().last(), "both sides tell the same story\n" + p);
        assertTrue(p.client().out().startsWith("rdma4j stress: loss=0.03 reorder=0.03 dup=0.01 corrupt=0.001 "
                + "messages=400 seed=11 qps=4 max_size=8192 mtu=1024\n"), p::toString);
        assertTrue(p.server().out().contains("\nclient 127.0.0.2: messages=400 seed=11 qps=4 max_size=8192 mtu=1024\n"),
                p::toString);
        Matcher lost = Pattern.compile("link faults \\(client's outgoing packets\\): lost=(\\d+) ")
                .matcher(p.client().out());
        assertTrue(lost.find(), p::toString);
        assertTrue(Long.parseLong(lost.group(1)) > 0, "3% loss over thousands of packets loses some\n" + p);
        Matcher receives = Pattern.compile("server: receives=(\\d+) ").matcher(p.server().out());
        assertTrue(receives.find() && Long.parseLong(receives.group(1)) > 0, "SENDs reached the server\n" + p);
    }

    @Test
    void wrongExpectedHashIsAMismatchOnTheServer() {
        StressClient.testHashSkew = 1;
        Pair p = pair(List.of("--loss", "0"), List.of("--loss", "0", "--messages", "100", "--seed", "3",
                "--max-size", "1024", "--qps", "2"));
        assertEquals(1, p.server().exitCode(), p::toString);
        assertEquals(1, p.client().exitCode(), p::toString);
        assertTrue(p.server().out().contains("hashes=MISMATCH"), p::toString);
        assertTrue(p.client().out().contains("hashes=MISMATCH"), "the client hears the verdict\n" + p);
        assertTrue(p.server().out().contains("the client expected"), p::toString);
        assertTrue(p.client().out().contains("\n  (to repeat: add --seed 3)\n"), p::toString);
    }

    @Test
    void readDataThatDoesNotMatchThePatternFailsTheClient() {
        StressClient.testReadSkew = 1;
        Pair p = pair(List.of("--loss", "0"), List.of("--loss", "0", "--messages", "200", "--seed", "4",
                "--max-size", "1024"));
        assertEquals(1, p.client().exitCode(), p::toString);
        assertEquals(1, p.server().exitCode(), p::toString);
        assertTrue(p.client().out().contains("first error: RDMA READ data wrong on QP "), p::toString);
        Matcher m = LAST.matcher(p.client().last());
        assertTrue(m.matches(), p::toString);
        assertTrue(Long.parseLong(m.group(3)) > 0, p::toString);
        assertTrue(p.server().out().contains("first error: (client) RDMA READ data wrong"), p::toString);
    }

    @Test
    void serverThatHangsUpIsAClearErrorForTheClient() throws Exception {
        try (ServerSocket fake = new ServerSocket(0)) {
            Thread t = Thread.ofVirtual().start(() -> {
                try (Socket s = fake.accept()) {
                    s.getInputStream().read(new byte[64]);
                } catch (IOException ignored) {
                    // the client's problem
                }
            });
            int udp = SoftDevices.freeUdpPort(26191, InetAddress.getByName("127.0.0.2"));
            Run r = Run.of(List.of("stress", "--bind", "127.0.0.2", "--udp-port", String.valueOf(udp), "-p",
                    String.valueOf(fake.getLocalPort()), "--messages", "10", "127.0.0.1"));
            t.join();
            assertEquals(1, r.exitCode(), r::toString);
            assertTrue(r.err().contains("couldn't read the server's queue pairs"), r::toString);
            assertFalse(r.err().contains("\tat "), r::toString);
        }
    }

    @Test
    void clientThatIsNotAStressClientIsRefused() throws Exception {
        int tcp = freeTcpPort();
        int udp = SoftDevices.freeUdpPort(26291, InetAddress.getByName("127.0.0.1"));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<Run> server = pool.submit(() -> Run.of(List.of("stress", "--bind", "127.0.0.1", "--udp-port",
                    String.valueOf(udp), "-p", String.valueOf(tcp))));
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            for (;;) {
                try (Socket s = new Socket("127.0.0.1", tcp)) {
                    OutputStream o = s.getOutputStream();
                    o.write("hello, pingpong here\n".getBytes());
                    o.flush();
                    InputStream in = s.getInputStream();
                    in.read();
                    break;
                } catch (IOException e) {
                    if (System.nanoTime() > giveUp) {
                        throw e;
                    }
                    Thread.sleep(20);
                }
            }
            Run r = server.get(RUN_TIMEOUT_S, TimeUnit.SECONDS);
            assertEquals(1, r.exitCode(), r::toString);
            assertTrue(r.err().contains("is not an rdma4j stress client"), r::toString);
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--bind 192.0.2.1|--bind 192.0.2.1: not an address of this host",
        "--bind no-such-host.invalid|Invalid value for option '--bind'",
        "127.0.0.1|connecting to a server (127.0.0.1) needs --bind ADDRESS",
        "--udp-port 5000|--udp-port needs --bind",
        "-p 5000|--port needs --bind",
        "-d rxe0 --loss 0.1 127.0.0.1|--loss needs --bind: only a --bind device injects faults, not -d rxe0",
        "-d rxe0 --udp-port 5000|--udp-port needs --bind (-d rxe0 is an existing device)",
        "-d rxe0 --messages 5|--messages is the client's to choose",
        "-d rxe0 -g 300 127.0.0.1|--gid-idx must be 0..255, not 300",
        "--bind 127.0.0.1 --messages 5|--messages is the client's to choose",
        "--bind 127.0.0.1 --seed 5|--seed is the client's to choose",
        "--bind 127.0.0.1 -p 70000 --udp-port 26391|--port 70000 is outside 1..65535",
    })
    void badRemoteFlagIsAUsageErrorWithExitCode2(String args, String message) {
        List<String> a = new ArrayList<>(List.of("stress"));
        a.addAll(List.of(args.split(" ")));
        Run r = Run.of(a);
        assertEquals(2, r.exitCode(), r::toString);
        assertTrue(r.err().startsWith(message), r::toString);
        assertTrue(r.err().contains("try 'rdma4j stress --help'"), r::toString);
        assertEquals("", r.out(), "nothing runs");
    }

    /**
     * Runs a server on 127.0.0.1 and a client on 127.0.0.2 (extra arguments each) on a free UDP and TCP
     * port; the client is retried while the server is not listening yet.
     */
    private static Pair pair(List<String> serverExtra, List<String> clientExtra) {
        int udp;
        try {
            udp = SoftDevices.freeUdpPort(25991, InetAddress.getByName("127.0.0.1"), InetAddress.getByName("127.0.0.2"));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        int tcp = freeTcpPort();
        List<String> s = new ArrayList<>(List.of("stress", "--bind", "127.0.0.1", "--udp-port", String.valueOf(udp),
                "-p", String.valueOf(tcp)));
        s.addAll(serverExtra);
        List<String> c = new ArrayList<>(List.of("stress", "--bind", "127.0.0.2", "--udp-port", String.valueOf(udp),
                "-p", String.valueOf(tcp)));
        c.addAll(clientExtra);
        c.add("127.0.0.1");
        ExecutorService pool = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "stress-test");
            t.setDaemon(true);
            return t;
        });
        try {
            Future<Run> server = pool.submit(() -> Run.of(s));
            Future<Run> client = pool.submit(() -> {
                long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                for (;;) {
                    Run r = Run.of(c);
                    boolean notListening = r.exitCode() != 0 && r.err().contains("Couldn't connect to");
                    if (!notListening || server.isDone() || System.nanoTime() > giveUp) {
                        return r;
                    }
                    Thread.sleep(20);
                }
            });
            Run cr = get(client, "client");
            Run sr = get(server, "server");
            return new Pair(sr, cr);
        } finally {
            pool.shutdownNow();
        }
    }

    private static Run get(Future<Run> f, String who) {
        try {
            return f.get(RUN_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            return fail("the " + who + " did not finish within " + RUN_TIMEOUT_S + " s");
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int freeTcpPort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
