// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cmutils;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code rdma4j cmatose}: a server and a client with several connections at once, every message of
 * both directions completed, over the in-process fabric and over UDP; the client refused on a port
 * without listener; bad flags.
 */
class CmatoseCommandTest {
    private static SoftPair pair;
    private static String ipA;
    private static String ipB;

    @BeforeAll
    static void setUp() {
        pair = new SoftPair("cmatose", 18600);
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
            cmatose: starting server
            initiating data transfers
            completing sends
            receiving data transfers
            data transfers complete
            cmatose: disconnecting
            disconnected
            test complete
            return status 0
            """;
    private static final String CLIENT_LINES = """
            cmatose: starting client
            cmatose: connecting
            receiving data transfers
            sending replies
            data transfers complete
            test complete
            return status 0
            """;

    @Test
    void fourConnectionsExchangeTheirMessagesOverTheInProcessFabric() throws Exception {
        String port = port();
        CmRun server = CmRun.start("cmatose", "-v", "-b", ipB, "-p", port, "-c", "4", "-C", "20", "-S", "1000");
        server.awaitListening();
        CmRun client = CmRun.start("cmatose", "-s", ipB, "-b", ipA, "-p", port, "-c", "4", "-C", "20", "-S", "1000");
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
        String a = "127.0.4." + pair.slot();
        String b = "127.0.5." + pair.slot();
        CmRun server = CmRun.start("cmatose", "-v", "-b", a, "-p", port, "-c", "3", "--bind", a, "--udp-port", udpB,
                "--udp-peer-port", udpA);
        server.awaitListening();
        CmRun client = CmRun.start("cmatose", "-s", a, "-b", b, "-p", port, "-c", "3", "--bind", b, "--udp-port", udpA,
                "--udp-peer-port", udpB);
        assertEquals(0, client.exitCode(), () -> client.all() + "\nserver " + server.all());
        assertEquals(0, server.exitCode(), server::all);
        assertEquals(SERVER_LINES, lines(server));
        assertEquals(CLIENT_LINES, client.out().toString());
    }

    @Test
    void aClientWithNoSourceAddressResolvesTheServersAddressOverUdpAndConnects() throws Exception {
        // no -b, no --bind: the connection manager takes the device with the route's source, here the
        // server's UDP device on 127.0.0.x (a local address is reached on the device that has it)
        String port = port();
        String a = "127.0.8." + pair.slot();
        CmRun server = CmRun.start("cmatose", "-v", "-b", a, "-p", port, "-c", "2", "-C", "5",
                "--udp-port", Integer.toString(Integer.parseInt(port) + 24_000));
        server.awaitListening();
        CmRun client = CmRun.start("cmatose", "-s", a, "-p", port, "-c", "2", "-C", "5");
        assertEquals(0, client.exitCode(), () -> client.all() + "\nserver " + server.all());
        assertEquals(0, server.exitCode(), server::all);
        assertEquals(SERVER_LINES, lines(server));
        assertEquals(CLIENT_LINES, client.out().toString());
    }

    @Test
    void noMessagesOnlyConnectsAndDisconnects() throws Exception {
        String port = port();
        CmRun server = CmRun.start("cmatose", "-v", "-b", ipB, "-p", port, "-c", "2", "-C", "0");
        server.awaitListening();
        CmRun client = CmRun.start("cmatose", "-s", ipB, "-p", port, "-c", "2", "-C", "0");
        assertEquals(0, client.exitCode(), () -> client.all() + "\nserver " + server.all());
        assertEquals(0, server.exitCode(), server::all);
        assertEquals("cmatose: starting server\ncmatose: disconnecting\ndisconnected\ntest complete\n"
                + "return status 0\n", lines(server));
    }

    @Test
    void aPortWithoutListenerIsRejected() throws Exception {
        CmRun client = CmRun.start("cmatose", "-s", ipB, "-b", ipA, "-p", port(), "-c", "2");
        assertEquals(8, client.exitCode(), client::all);
        assertTrue(client.out().toString().contains("cmatose: event: RDMA_CM_EVENT_REJECTED, error: 8\n"),
                client::all);
        assertTrue(client.out().toString().endsWith("test complete\nreturn status 8\n"), client::all);
    }

    @Test
    void aServerWithoutClientsGivesUp() throws Exception {
        CmRun server = CmRun.start("cmatose", "-v", "-b", ipB, "-p", port(), "--timeout", "1");
        assertEquals(110, server.exitCode(), server::all);
        assertTrue(server.out().toString().contains("cmatose: no event within 1 s in connect events (1 connections left)"),
                server::all);
    }

    @Test
    void badFlagsAreRefused() throws Exception {
        for (List<String> args : List.of(List.of("cmatose", "-c", "0"), List.of("cmatose", "-P", "ib"),
                List.of("cmatose", "-m"), List.of("cmatose", "-a", "40"), List.of("cmatose", "-C", "-1"))) {
            CmRun r = CmRun.start(args.toArray(String[]::new));
            assertEquals(2, r.exitCode(), () -> args + "\n" + r.all());
        }
    }
}
