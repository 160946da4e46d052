// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cmutils;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code rdma4j udaddy}: a server and a client with several UD ids at once (SIDR), every datagram of
 * both directions completed, over the in-process fabric and over UDP; the client told no one serves the
 * port; bad flags.
 */
class UdaddyCommandTest {
    private static SoftPair pair;
    private static String ipA;
    private static String ipB;

    @BeforeAll
    static void setUp() {
        pair = new SoftPair("udaddy", 19100);
        ipA = pair.ipA;
        ipB = pair.ipB;
    }

    @AfterAll
    static void tearDown() throws InterruptedException {
        pair.remove();
    }

    private static String port() {
        return pair.port();
    }

    private static String lines(CmRun server) {
        return SoftPair.lines(server);
    }

    private static final String SERVER_LINES = """
            udaddy: starting server
            receiving data transfers
            sending replies
            data transfers complete
            test complete
            return status 0
            """;
    private static final String CLIENT_LINES = """
            udaddy: starting client
            udaddy: connecting
            initiating data transfers
            receiving data transfers
            data transfers complete
            test complete
            return status 0
            """;

    @Test
    void fourIdsExchangeTheirDatagramsOverTheInProcessFabric() throws Exception {
        String port = port();
        CmRun server = CmRun.start("udaddy", "-v", "-b", ipB, "-p", port, "-c", "4", "-C", "20", "-S", "1000");
        server.awaitListening();
        CmRun client = CmRun.start("udaddy", "-s", ipB, "-b", ipA, "-p", port, "-c", "4", "-C", "20", "-S", "1000");
        assertEquals(0, client.exitCode(), () -> client.all() + "\nserver " + server.all());
        assertEquals(0, server.exitCode(), server::all);
        assertEquals(SERVER_LINES, lines(server));
        assertEquals(CLIENT_LINES, client.out().toString());
    }

    @Test
    void overUdpBetweenTwoSoftDevices() throws Exception {
        String port = port();
        String udpA = Integer.toString(Integer.parseInt(port) + 22_000);
        String udpB = Integer.toString(Integer.parseInt(port) + 23_000);
        String a = "127.0.6." + pair.slot();
        String b = "127.0.7." + pair.slot();
        CmRun server = CmRun.start("udaddy", "-v", "-b", a, "-p", port, "-c", "3", "--bind", a, "--udp-port", udpB,
                "--udp-peer-port", udpA);
        server.awaitListening();
        CmRun client = CmRun.start("udaddy", "-s", a, "-b", b, "-p", port, "-c", "3", "--bind", b, "--udp-port", udpA,
                "--udp-peer-port", udpB);
        assertEquals(0, client.exitCode(), () -> client.all() + "\nserver " + server.all());
        assertEquals(0, server.exitCode(), server::all);
        assertEquals(SERVER_LINES, lines(server));
        assertEquals(CLIENT_LINES, client.out().toString());
    }

    @Test
    void aClientWithNoSourceAddressResolvesTheServersAddressOverUdpAndExchanges() throws Exception {
        // no -b, no --bind: the device with the route's source, the server's UDP device on 127.0.0.x
        String port = port();
        String a = "127.0.9." + pair.slot();
        CmRun server = CmRun.start("udaddy", "-v", "-b", a, "-p", port, "-c", "2", "-C", "5",
                "--udp-port", Integer.toString(Integer.parseInt(port) + 24_000));
        server.awaitListening();
        CmRun client = CmRun.start("udaddy", "-s", a, "-p", port, "-c", "2", "-C", "5");
        assertEquals(0, client.exitCode(), () -> client.all() + "\nserver " + server.all());
        assertEquals(0, server.exitCode(), server::all);
        assertEquals(SERVER_LINES, lines(server));
        assertEquals(CLIENT_LINES, client.out().toString());
    }

    @Test
    void noDatagramsOnlyResolves() throws Exception {
        String port = port();
        CmRun server = CmRun.start("udaddy", "-v", "-b", ipB, "-p", port, "-c", "2", "-S", "0");
        server.awaitListening();
        CmRun client = CmRun.start("udaddy", "-s", ipB, "-p", port, "-c", "2", "-S", "0");
        assertEquals(0, client.exitCode(), () -> client.all() + "\nserver " + server.all());
        assertEquals(0, server.exitCode(), server::all);
        assertEquals("udaddy: starting server\ntest complete\nreturn status 0\n", lines(server));
        assertEquals("udaddy: starting client\nudaddy: connecting\ntest complete\nreturn status 0\n",
                client.out().toString());
    }

    @Test
    void aPortNobodyServesIsUnreachableWithTheSidrStatus() throws Exception {
        long t0 = System.nanoTime();
        CmRun client = CmRun.start("udaddy", "-s", ipB, "-b", ipA, "-p", port(), "-c", "2");
        assertEquals(1, client.exitCode(), client::all);
        assertTrue(client.out().toString().contains("udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: 1\n"),
                client::all);
        assertTrue(client.out().toString().endsWith("test complete\nreturn status 1\n"), client::all);
        assertTrue(System.nanoTime() - t0 < 30_000_000_000L, "answered at once, not after the CM's retries");
    }

    /**
     * No device has the address: the SIDR_REQ goes unanswered. The CM would say UNREACHABLE (-110) only
     * after its 16 tries of about 4.4 s each (the kernel's rdma_cm takes as long); --timeout ends it first.
     */
    @Test
    void anAddressNobodyHasGetsNoAnswerAndTheClientGivesUp() throws Exception {
        String nobody = ipB.substring(0, ipB.lastIndexOf(':') + 1) + "fffc";
        CmRun client = CmRun.start("udaddy", "-s", nobody, "-b", ipA, "-p", port(), "--timeout", "2");
        assertEquals(110, client.exitCode(), client::all);
        assertEquals("""
                udaddy: starting client
                udaddy: connecting
                udaddy: no event within 2 s in connect events (1 connections left)
                test complete
                return status 110
                """, client.out().toString());
    }

    @Test
    void aDatagramLargerThanTheMtuIsRefusedBeforeConnecting() throws Exception {
        CmRun client = CmRun.start("udaddy", "-s", ipB, "-b", ipA, "-p", port(), "-S", "5000");
        assertEquals(-22 & 0xFF, client.exitCode() & 0xFF, client::all);
        assertTrue(client.out().toString().contains("udaddy: message_size 5000 is larger than active mtu "),
                client::all);
    }

    @Test
    void aServerWithoutClientsGivesUp() throws Exception {
        CmRun server = CmRun.start("udaddy", "-v", "-b", ipB, "-p", port(), "--timeout", "1");
        assertEquals(110, server.exitCode(), server::all);
        assertTrue(server.out().toString().contains("udaddy: no event within 1 s in connect events (1 connections left)"),
                server::all);
    }

    @Test
    void badFlagsAreRefused() throws Exception {
        for (List<String> args : List.of(List.of("udaddy", "-c", "0"), List.of("udaddy", "-P", "ipoib"),
                List.of("udaddy", "-f", "gid"), List.of("udaddy", "-t", "4"), List.of("udaddy", "-C", "-1"),
                List.of("udaddy", "-p", "70000"), List.of("udaddy", "-x"))) {
            CmRun r = CmRun.start(args.toArray(String[]::new));
            assertEquals(2, r.exitCode(), () -> args + "\n" + r.all());
        }
    }
}
