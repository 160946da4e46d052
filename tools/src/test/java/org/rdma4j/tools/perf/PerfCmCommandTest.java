// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdma4j.tools.Rdma4j;
import picocli.CommandLine;

/**
 * {@code rdma4j perf TEST -R} as two commands, a server and a client, each on its own soft device over
 * RoCEv2/UDP on 127.0.0.x (free UDP ports, not 4791), as two processes would run them: the connection
 * manager's MADs and the test's packets go through the sockets. Checks the tables, that each end's
 * local address lines are the other's remote ones, and the refusal of a port nobody listens on.
 */
@Timeout(120)
class PerfCmCommandTest {
    private static final AtomicInteger PORTS = new AtomicInteger(23_000 + (int) (ProcessHandle.current().pid() % 700) * 3);
    private static ExecutorService pool;

    @BeforeAll
    static void start() {
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "perf-cm-test");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterAll
    static void stop() {
        pool.shutdownNow();
    }

    private record Run(Future<Integer> exit, StringWriter out, StringWriter err) {
        static Run start(String... args) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CommandLine cl = Rdma4j.commandLine(args);
            cl.setOut(new PrintWriter(out, true));
            cl.setErr(new PrintWriter(err, true));
            return new Run(pool.submit(() -> cl.execute(args)), out, err);
        }

        int exitCode() throws Exception {
            return exit.get(90, TimeUnit.SECONDS);
        }

        String all() {
            return "stdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    private static void waitWaiting(Run server) throws InterruptedException {
        // the server listens before it prints this line
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!server.out.toString().contains("Waiting for client to connect")) {
            assertTrue(!server.exit.isDone(), server::all);
            assertTrue(System.nanoTime() < deadline, server::all);
            Thread.sleep(10);
        }
    }

    private static List<String> addresses(String out, String side) {
        return Pattern.compile("^ " + side + " address: (.*)$", Pattern.MULTILINE).matcher(out).results()
                .map(m -> m.group(1)).toList();
    }

    private static String[] args(String test, String bind, int udp, int peerUdp, int port, String... more) {
        List<String> a = new java.util.ArrayList<>(List.of("perf", test, "-R", "--bind", bind, "-d", "perfcm-" + udp,
                "--udp-port", Integer.toString(udp), "--udp-peer-port", Integer.toString(peerUdp),
                "-p", Integer.toString(port), "--exchange-timeout", "30"));
        a.addAll(List.of(more));
        return a.toArray(String[]::new);
    }

    private void pair(String test, String... more) throws Exception {
        int port = PORTS.addAndGet(3);
        int udpS = port + 20_000;
        int udpC = port + 20_001;
        Run server = Run.start(args(test, "127.0.0.1", udpS, udpC, port, more));
        waitWaiting(server);
        List<String> clientArgs = new java.util.ArrayList<>(List.of(args(test, "127.0.0.2", udpC, udpS, port, more)));
        clientArgs.add("127.0.0.1");
        Run client = Run.start(clientArgs.toArray(String[]::new));
        assertEquals(0, client.exitCode(), client::all);
        assertEquals(0, server.exitCode(), server::all);
        String c = client.out.toString();
        String s = server.out.toString();
        assertTrue(c.contains(" Data ex. method : rdma_cm"), c);
        Matcher row = LoopbackTest.BW_LINE.matcher(c);
        Matcher lat = LoopbackTest.LAT_LINE.matcher(c);
        assertTrue(row.find() || lat.find(), "a result row\n" + c);
        assertEquals(addresses(c, "local"), addresses(s, "remote"), c + s);
        assertEquals(addresses(s, "local"), addresses(c, "remote"), c + s);
    }

    @Test
    void writeLatOverUdp() throws Exception {
        pair("write_lat", "-n", "30");
    }

    @Test
    void readBwWithTwoQpsOverUdp() throws Exception {
        pair("read_bw", "-n", "20", "-q", "2", "-s", "8192");
    }

    @Test
    void sendLatOverUdp() throws Exception {
        pair("send_lat", "-n", "30");
    }

    @Test
    void aClientWithNoSourceAddressResolvesTheServersAddressAndRuns() throws Exception {
        // neither --bind nor -d: the connection manager takes the device with the route's source, here
        // the server's UDP device on 127.0.0.x (a local address is reached on the device that has it)
        int port = PORTS.addAndGet(3);
        int udp = port + 20_002;
        String a = "127.0.12." + (port % 250 + 1);
        Run server = Run.start(args("write_lat", a, udp, udp, port, "-n", "30"));
        waitWaiting(server);
        Run client = Run.start("perf", "write_lat", "-R", "-p", Integer.toString(port), "--exchange-timeout", "30",
                "-n", "30", a);
        assertEquals(0, client.exitCode(), client::all);
        assertEquals(0, server.exitCode(), server::all);
        String c = client.out.toString();
        assertTrue(c.contains(" Data ex. method : rdma_cm"), c);
        assertTrue(LoopbackTest.LAT_LINE.matcher(c).find(), "a result row\n" + c);
    }

    @Test
    void aClientWhoseServerIsNotThereFailsWithinTheTimeout() throws Exception {
        int port = PORTS.addAndGet(3);
        // nobody listens: a clear error, at the latest when the 2 s exchange timeout ends
        List<String> a = new java.util.ArrayList<>(List.of(args("write_lat", "127.0.0.2", port + 20_001,
                port + 20_000, port)));
        a.set(a.indexOf("30"), "2");
        a.add("127.0.0.1");
        Run client = Run.start(a.toArray(String[]::new));
        assertEquals(1, client.exitCode(), client::all);
        // a REJ when some CM agent of this process answers for the address, else no answer at all
        String e = client.err.toString();
        assertTrue(e.contains("REJECTED") && e.contains("nothing listens there")
                || e.contains("rdma4j: no ESTABLISHED within 2.0 s"), client::all);
    }
}
