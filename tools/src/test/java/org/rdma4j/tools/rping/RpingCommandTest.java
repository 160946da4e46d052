// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.rping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import org.rdma4j.tools.Rdma4j;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;
import picocli.CommandLine;

/**
 * {@code rdma4j rping}: a server and a client on threads of this JVM, connected by rdma4j's CM (REQ,
 * REP, RTU, DREQ and DREP as MADs on the devices' QP1s), over the in-process fabric and over UDP on
 * 127.0.0.x; every ping's data is checked against what rping's client writes.
 */
class RpingCommandTest {
    private static final Pattern PING = Pattern.compile("^ping data: (rdma-ping-(\\d+): (\\S*))$", Pattern.MULTILINE);
    private static final AtomicInteger PORTS = new AtomicInteger(17_500 + (int) (ProcessHandle.current().pid() % 500));
    private static ExecutorService pool;
    private static Device devA;
    private static Device devB;
    private static String ipA;
    private static String ipB;

    @BeforeAll
    static void setUp() {
        devA = Verbs.createDevice("soft:loopback?name=rping-a&fabric=rping");
        devB = Verbs.createDevice("soft:loopback?name=rping-b&fabric=rping");
        try (Context a = devA.open(); Context b = devB.open()) {
            ipA = a.queryGid(1, 1).toInetAddress().getHostAddress();
            ipB = b.queryGid(1, 1).toInetAddress().getHostAddress();
        }
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "rping-test");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterAll
    static void tearDown() {
        pool.shutdownNow();
        Verbs.removeDevice(devA);
        Verbs.removeDevice(devB);
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
            return exit.get(60, TimeUnit.SECONDS);
        }

        String all() {
            return "stdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    /** What rping's client puts in its buffer for ping {@code ping} (size bytes, the last a NUL). */
    static String expectedPing(int ping, int size) {
        StringBuilder b = new StringBuilder("rdma-ping-" + ping + ": ");
        int c = 65 + ping % 58;
        while (b.length() < size - 1) {
            b.append((char) c);
            if (++c > 122) {
                c = 65;
            }
        }
        return b.substring(0, size - 1);
    }

    private static void assertPings(String out, int count, int size) {
        Matcher m = PING.matcher(out);
        int n = 0;
        while (m.find()) {
            assertEquals(n, Integer.parseInt(m.group(2)), out);
            assertEquals(expectedPing(n, size), m.group(1), "ping " + n);
            n++;
        }
        assertEquals(count, n, out);
    }

    private static void waitListening(Run server) throws InterruptedException {
        // the listener is up once the server's id is bound; give it a moment and make sure it did not fail
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!server.out.toString().contains("listening on") && System.nanoTime() < deadline) {
            assertTrue(!server.exit.isDone(), server::all);
            Thread.sleep(10);
        }
    }

    @Test
    void pingsOverTheInProcessFabricAreValidatedAndTheServerSeesTheSameData() throws Exception {
        int port = PORTS.incrementAndGet();
        Run server = Run.start("rping", "-s", "-a", ipB, "-p", Integer.toString(port), "-S", "100", "-v", "-d");
        waitListening(server);
        Run client = Run.start("rping", "-c", "-a", ipB, "-I", ipA, "-p", Integer.toString(port), "-C", "12",
                "-S", "100", "-v", "-V");
        assertEquals(0, client.exitCode(), client::all);
        assertEquals(0, server.exitCode(), server::all);
        assertPings(client.out.toString(), 12, 100);
        assertTrue(server.out.toString().contains("server ping data: " + expectedPing(11, 100)), server::all);
        assertTrue(client.err.toString().contains("client DISCONNECT EVENT..."), client::all);
        assertTrue(server.err.toString().contains("server DISCONNECT EVENT..."), server::all);
    }

    @Test
    void withDashQTheProgramsOwnQpsAreMovedWithInitQpAttrAndMixWithCmCreatedOnes() throws Exception {
        // -q on both sides, then -q only on the client, then only on the server: rping's three mixes
        for (String[] q : new String[][] {{"-q", "-q"}, {"-q", null}, {null, "-q"}}) {
            int port = PORTS.incrementAndGet();
            List<String> sArgs = new java.util.ArrayList<>(List.of("rping", "-s", "-a", ipB, "-p",
                    Integer.toString(port), "-S", "64", "-v", "-d"));
            List<String> cArgs = new java.util.ArrayList<>(List.of("rping", "-c", "-a", ipB, "-I", ipA, "-p",
                    Integer.toString(port), "-C", "7", "-S", "64", "-v", "-V"));
            if (q[0] != null) {
                cArgs.add(q[0]);
            }
            if (q[1] != null) {
                sArgs.add(q[1]);
            }
            Run server = Run.start(sArgs.toArray(String[]::new));
            waitListening(server);
            Run client = Run.start(cArgs.toArray(String[]::new));
            assertEquals(0, client.exitCode(), () -> cArgs + "\n" + client.all());
            assertEquals(0, server.exitCode(), () -> sArgs + "\n" + server.all());
            assertPings(client.out.toString(), 7, 64);
            assertTrue(server.out.toString().contains("server ping data: " + expectedPing(6, 64)), server::all);
            assertTrue(client.err.toString().contains("client DISCONNECT EVENT..."), client::all);
        }
    }

    @Test
    void pingsBetweenTwoUdpDevicesWithTheLargestSize() throws Exception {
        int port = PORTS.incrementAndGet();
        String udpA = Integer.toString(port + 20_000);
        String udpB = Integer.toString(port + 21_000);
        Run server = Run.start("rping", "-s", "-a", "127.0.0.1", "--bind", "127.0.0.1", "--udp-port", udpB,
                "--udp-peer-port", udpA, "-p", Integer.toString(port), "-S", "65535", "-d");
        waitListening(server);
        Run client = Run.start("rping", "-c", "-a", "127.0.0.1", "-I", "127.0.0.2", "--bind", "127.0.0.2", "--udp-port", udpA,
                "--udp-peer-port", udpB, "-p", Integer.toString(port), "-C", "3", "-S", "65535", "-v", "-V");
        assertEquals(0, client.exitCode(), client::all);
        assertEquals(0, server.exitCode(), server::all);
        assertPings(client.out.toString(), 3, 65535);
        assertFalse(client.err.toString().contains("could not remove"), client::all);
        assertFalse(server.err.toString().contains("could not remove"), server::all);
    }

    @Test
    void aRejectedClientRemovesTheDeviceItMadeAndSoDoesTheServer() throws Exception {
        int port = PORTS.incrementAndGet();
        int unused = PORTS.incrementAndGet();
        String udpA = Integer.toString(port + 22_000);
        String udpB = Integer.toString(port + 23_000);
        Run server = Run.start("rping", "-s", "-a", "127.0.0.1", "--bind", "127.0.0.1", "--udp-port", udpB,
                "--udp-peer-port", udpA, "-p", Integer.toString(port), "--accept-timeout", "20", "-d");
        waitListening(server);
        // a port nobody listens on: REJECTED, and the id that ended so gives its device back
        Run rejected = Run.start("rping", "-c", "-a", "127.0.0.1", "-I", "127.0.0.2", "--bind", "127.0.0.2",
                "--udp-port", udpA, "--udp-peer-port", udpB, "-p", Integer.toString(unused), "-C", "1");
        assertEquals(1, rejected.exitCode(), rejected::all);
        assertTrue(rejected.err.toString().contains("RDMA_CM_EVENT_REJECTED"), rejected::all);
        assertFalse(rejected.err.toString().contains("could not remove"), rejected::all);
        Run good = Run.start("rping", "-c", "-a", "127.0.0.1", "-I", "127.0.0.2", "--bind", "127.0.0.2",
                "--udp-port", udpA, "--udp-peer-port", udpB, "-p", Integer.toString(port), "-C", "2", "-V");
        assertEquals(0, good.exitCode(), good::all);
        assertEquals(0, server.exitCode(), server::all);
        assertFalse(good.err.toString().contains("could not remove"), good::all);
        assertFalse(server.err.toString().contains("could not remove"), server::all);
    }

    @Test
    void aClientWithNoSourceAddressResolvesTheServersAddressAndConnects() throws Exception {
        // no -I, no --bind: the device is the one with the source of the route to -a (here the server's
        // own device, which has -a: a local address is reached on the device that has it)
        int port = PORTS.incrementAndGet();
        String udp = Integer.toString(port + 22_000);
        String a = "127.0.13." + (port % 250 + 1); // a soft device may outlive its command: an address of its own
        Run server = Run.start("rping", "-s", "-a", a, "--udp-port", udp, "-p", Integer.toString(port), "-d");
        waitListening(server);
        Run client = Run.start("rping", "-c", "-a", a, "-p", Integer.toString(port), "-C", "3", "-v", "-V");
        assertEquals(0, client.exitCode(), client::all);
        assertEquals(0, server.exitCode(), server::all);
        assertPings(client.out.toString(), 3, 64);
    }

    @Test
    void aClientWithOnlyBindConnectsFromItsBindDevice() throws Exception {
        // --bind without -I: the device the tool made is the source, as -I would make it
        int port = PORTS.incrementAndGet();
        String udp = Integer.toString(port + 23_000);
        String a = "127.0.14." + (port % 250 + 1);
        String b = "127.0.15." + (port % 250 + 1);
        Run server = Run.start("rping", "-s", "-a", a, "--udp-port", udp, "-p", Integer.toString(port), "-d");
        waitListening(server);
        Run client = Run.start("rping", "-c", "-a", a, "--bind", b, "--udp-port", udp, "-p",
                Integer.toString(port), "-C", "3", "-v", "-V");
        assertEquals(0, client.exitCode(), client::all);
        assertEquals(0, server.exitCode(), server::all);
        assertPings(client.out.toString(), 3, 64);
        assertTrue(server.out.toString().contains(" from /" + b + ":"), server::all);
    }

    @Test
    void aPortWithoutListenerIsRejectedWithReasonEight() throws Exception {
        int port = PORTS.incrementAndGet();
        int other = PORTS.incrementAndGet();
        // the peer's CM agent runs (a server listens on another port) and answers the REQ with REJ 8
        Run server = Run.start("rping", "-s", "-a", ipB, "-p", Integer.toString(other), "-d", "--accept-timeout", "20");
        waitListening(server);
        Run client = Run.start("rping", "-c", "-a", ipB, "-I", ipA, "-p", Integer.toString(port), "-C", "1");
        assertEquals(1, client.exitCode(), client::all);
        assertTrue(client.err.toString().contains("cma event RDMA_CM_EVENT_REJECTED, error 8"), client::all);
        // and the server is still there for the right port
        Run good = Run.start("rping", "-c", "-a", ipB, "-I", ipA, "-p", Integer.toString(other), "-C", "2", "-V");
        assertEquals(0, good.exitCode(), good::all);
        assertEquals(0, server.exitCode(), server::all);
    }

    @Test
    void aServerNobodyConnectsToGivesUpAfterTheAcceptTimeout() throws Exception {
        int port = PORTS.incrementAndGet();
        Run server = Run.start("rping", "-s", "-a", ipB, "-p", Integer.toString(port), "--accept-timeout", "1");
        assertEquals(1, server.exitCode(), server::all);
        assertTrue(server.err.toString().contains("wait for CONNECT_REQUEST"), server::all);
    }

    @Test
    void badFlagsAreRefusedWithRpingsMessages() throws Exception {
        for (List<String> args : List.of(List.of("rping", "-s", "-c", "-a", "127.0.0.1"),
                List.of("rping", "-c"),
                List.of("rping", "-c", "-a", "127.0.0.1", "-S", "25"),
                List.of("rping", "-c", "-a", "127.0.0.1", "-S", "65536"),
                List.of("rping", "-c", "-a", "127.0.0.1", "-C", "-1"),
                List.of("rping", "-c", "-a", "no-such-host.invalid"),
                List.of("rping", "-s", "-q", "-p", "70000"))) {
            Run r = Run.start(args.toArray(String[]::new));
            assertEquals(2, r.exitCode(), () -> args + "\n" + r.all());
        }
        Run size = Run.start("rping", "-c", "-a", "127.0.0.1", "-S", "25");
        assertEquals(2, size.exitCode());
        assertTrue(size.err.toString().contains("Invalid size 25 (valid range is 26 to 65536)"), size::all);
    }
}
