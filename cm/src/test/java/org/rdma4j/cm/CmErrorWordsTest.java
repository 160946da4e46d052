// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;

/**
 * Every kind of connection manager error names its errno first, then the step, the peer's address and
 * port (or the local one for a step without a peer) and any timeout in human units, never PT30S.
 */
class CmErrorWordsTest {
    /** Has a device (made by the first listen); servers listen here. */
    static final String SERVER = "127.0.0.221";
    /** Has no device and never gets one: nothing answers there. */
    static final String NOBODY = "127.0.0.222";
    /** A client's source address (a device is made for it). */
    static final String CLIENT = "127.0.0.223";
    /** An address whose RoCE port another socket holds. */
    static final String TAKEN = "127.0.0.224";

    @BeforeAll
    static void port() throws Exception {
        CmEngine.INSTANCE.opener = GsiOpener.PROVIDER;
        LocalDevices.udpPort = SoftDevices.freeUdpPort(32_000, InetAddress.getByName(SERVER),
                InetAddress.getByName(NOBODY), InetAddress.getByName(CLIENT), InetAddress.getByName(TAKEN),
                InetAddress.getByName("127.0.0.225"));
    }

    @AfterAll
    static void back() {
        LocalDevices.udpPort = 0;
    }

    private static EndpointOptions quick(Duration timeout) {
        return new EndpointOptions().timeout(timeout).responseTimeout(10).maxCmRetries(1);
    }

    private static void noIsoDuration(VerbsException e) {
        assertFalse(e.getMessage().matches("(?s).*\\bPT[0-9.]+[SMH].*"), e::getMessage);
    }

    @Test
    void timeoutsAreWrittenInHumanUnits() {
        assertEquals("30 s", CmWords.duration(Duration.ofSeconds(30)));
        assertEquals("500 ms", CmWords.duration(Duration.ofMillis(500)));
        assertEquals("1.5 s", CmWords.duration(Duration.ofMillis(1500)));
        assertEquals("2 min", CmWords.duration(Duration.ofMinutes(2)));
        assertEquals("90 s", CmWords.duration(Duration.ofSeconds(90)));
        assertEquals("250 us", CmWords.duration(Duration.ofNanos(250_000)));
        assertEquals("4.36 s", CmWords.duration(Duration.ofNanos(CmMad.cmTimeNs(20) + CmMad.cmTimeNs(14))));
        VerbsException e = assertThrows(VerbsException.class, () -> new EndpointOptions().timeout(Duration.ofSeconds(-1)));
        assertEquals("EINVAL: EndpointOptions.timeout: it must be positive, got -1 s", e.getMessage());
    }

    @Test
    void eachSynchronousWaitIsNamedForItsStep() {
        assertEquals("resolve address of", CmWords.step(CmEventType.ADDR_RESOLVED, false));
        assertEquals("resolve route to", CmWords.step(CmEventType.ROUTE_RESOLVED, false));
        assertEquals("get request on", CmWords.step(CmEventType.CONNECT_REQUEST, false));
        assertEquals("connect to", CmWords.step(CmEventType.ESTABLISHED, false));
        assertEquals("accept from", CmWords.step(CmEventType.ESTABLISHED, true));
        assertEquals("disconnect from", CmWords.step(CmEventType.DISCONNECTED, false));
        assertEquals("disconnect from 192.0.2.7:7471 (local 192.0.2.1:40000)", CmWords.where("disconnect from",
                new InetSocketAddress("192.0.2.7", 7471), new InetSocketAddress("192.0.2.1", 40000)));
        assertEquals("connect to [fe80::1]:7471", CmWords.where("connect to", new InetSocketAddress("fe80::1", 7471), null));
        assertEquals("::1", CmWords.compress("0:0:0:0:0:0:0:1"));
        assertEquals("2001:db8::1:0:0:1", CmWords.compress("2001:db8:0:0:1:0:0:1"));
        assertEquals("::", CmWords.compress("0:0:0:0:0:0:0:0"));
        assertEquals("2001:db8:0:1:1:1:1:1", CmWords.compress("2001:db8:0:1:1:1:1:1"));
        assertEquals("fe80::1%lo", CmWords.compress("fe80:0:0:0:0:0:0:1%lo"));
    }

    @Test
    void rejectReasonsAreWrittenAsIbtaNamesThem() {
        InetSocketAddress peer = new InetSocketAddress(SERVER, 7471);
        assertEquals("no QP available", CmWords.rejectReason(1, peer));
        assertEquals("timeout", CmWords.rejectReason(4, peer));
        assertEquals("invalid service ID: nothing listens on port 7471 there", CmWords.rejectReason(8, peer));
        assertEquals("consumer defined: the peer's program rejected the connection, or its listen backlog is full",
                CmWords.rejectReason(28, peer));
        assertEquals("invalid class version", CmWords.rejectReason(31, peer));
        assertEquals("IB CM reject reason 99", CmWords.rejectReason(99, peer));
    }

    @Test
    void aListenOnAnAddressNoDeviceHasNamesTheAddressAndHowToMakeADevice() {
        VerbsException e = assertThrows(VerbsException.class, () -> RdmaServer.listen(
                new InetSocketAddress(NOBODY, 7471), new EndpointOptions().softDevice(SoftDevicePolicy.NEVER)));
        assertEquals(Errno.EADDRNOTAVAIL, e.errno());
        assertTrue(e.getMessage().startsWith("EADDRNOTAVAIL: bind to " + NOBODY + ":7471: no RDMA device has the address "
                + NOBODY + " (make one: EndpointOptions.softDevice(SoftDevicePolicy.ANY_ADDRESS)"), e::getMessage);
    }

    @Test
    void aClientWithNoPeerTimesOutNamingThePeerThePortAndTheTimeout() {
        EndpointOptions o = new EndpointOptions().timeout(Duration.ofMillis(300)).source(address(CLIENT));
        VerbsException e = assertThrows(VerbsException.class,
                () -> RdmaClient.connect(new InetSocketAddress(NOBODY, 7471), o));
        assertEquals(Errno.ETIMEDOUT, e.errno(), e::getMessage);
        assertTrue(e.getMessage().matches("ETIMEDOUT: connect to 127\\.0\\.0\\.222:7471 \\(local 127\\.0\\.0\\.223:"
                + "[0-9]+\\): no ESTABLISHED within 300 ms \\(is a server listening there, and is its device up\\?\\)"),
                e::getMessage);
        noIsoDuration(e);
    }

    @Test
    void aClientWhosePeersCmNeverAnswersIsUnreachableNamingTheRetries() {
        EndpointOptions o = quick(Duration.ofSeconds(20)).source(address(CLIENT));
        VerbsException e = assertThrows(VerbsException.class,
                () -> RdmaClient.connect(new InetSocketAddress(NOBODY, 7472), o));
        assertEquals(Errno.ETIMEDOUT, e.errno(), e::getMessage);
        assertTrue(e.getMessage().matches("ETIMEDOUT: connect to 127\\.0\\.0\\.222:7472 \\(local 127\\.0\\.0\\.223:"
                + "[0-9]+\\): UNREACHABLE \\(status -110\\): the peer's CM did not answer in 2 tries 71\\.3 ms apart "
                + "\\(about 143 ms; response timeout 10, 1 retry\\)"), e::getMessage);
    }

    @Test
    void aClientWhoseSourceAddressHasNoDeviceNamesThePeerAndTheSource() {
        EndpointOptions o = quick(Duration.ofSeconds(20)).source(address(NOBODY)).softDevice(SoftDevicePolicy.NEVER);
        VerbsException e = assertThrows(VerbsException.class,
                () -> RdmaClient.connect(new InetSocketAddress(SERVER, 7473), o));
        assertEquals(Errno.EADDRNOTAVAIL, e.errno(), e::getMessage);
        assertTrue(e.getMessage().startsWith("EADDRNOTAVAIL: connect to 127.0.0.221:7473: bind to 127.0.0.222:0: no RDMA"
                + " device has the address 127.0.0.222"), e::getMessage);
    }

    @Test
    void aClientWhoseRouteLeavesFromAnAddressNoDeviceHasNamesThePeerAndThatAddress() throws Exception {
        InetAddress routeSource = SourceRoute.router.source(address(NOBODY));
        org.junit.jupiter.api.Assumptions.assumeTrue(DeviceMatch.find(CmEngine.INSTANCE, routeSource, null) == null,
                "a device of this JVM has " + routeSource);
        EndpointOptions o = quick(Duration.ofSeconds(20)).softDevice(SoftDevicePolicy.NEVER);
        VerbsException e = assertThrows(VerbsException.class,
                () -> RdmaClient.connect(new InetSocketAddress(NOBODY, 7474), o));
        assertEquals(Errno.ENODEV, e.errno(), e::getMessage);
        String s = routeSource.getHostAddress();
        assertTrue(e.getMessage().startsWith("ENODEV: resolve address of 127.0.0.222:7474: ADDR_ERROR (status -19): "
                + "the route to 127.0.0.222 leaves from " + s + ", and no RDMA device has " + s + " as a GID"),
                e::getMessage);
    }

    @Test
    void anAcceptWhoseClientSendsNoRtuTimesOutNamingTheClientAndTheTimeout() throws Exception {
        try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(SERVER, 7488),
                new EndpointOptions().timeout(Duration.ofMillis(200)));
             CmEventChannel ch = new CmEventChannel(); CmId client = ch.createId(PortSpace.TCP)) {
            client.resolveAddr(null, new InetSocketAddress(SERVER, 7488), 2000);
            assertEquals(CmEventType.ADDR_RESOLVED, next(ch));
            client.resolveRoute(2000);
            assertEquals(CmEventType.ROUTE_RESOLVED, next(ch));
            client.connect(new ConnParam().qpNum(0x123)); // no QP of its own: it would send the RTU by establish()
            VerbsException e = assertThrows(VerbsException.class, server::accept);
            int clientPort = client.localAddress().getPort();
            assertEquals("ETIMEDOUT: accept from 127.0.0.221:" + clientPort + " (local 127.0.0.221:7488): no ESTABLISHED "
                    + "within 200 ms (the client sent no RTU)", e.getMessage());
        }
    }

    @Test
    void tooMuchPrivateDataNamesTheStepAndThePeer() throws Exception {
        try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(SERVER, 7489), new EndpointOptions())) {
            EndpointOptions o = new EndpointOptions();
            o.connParam().privateData(new byte[57]);
            VerbsException e = assertThrows(VerbsException.class,
                    () -> RdmaClient.connect(new InetSocketAddress(SERVER, 7489), o));
            assertTrue(e.getMessage().matches("EINVAL: connect to 127\\.0\\.0\\.221:7489 \\(local 127\\.0\\.0\\.221:"
                    + "[0-9]+\\): at most 56 bytes of private data, got 57"), e::getMessage);
        }
    }

    private static CmEventType next(CmEventChannel ch) throws InterruptedException {
        CmEvent e = ch.getEvent(20, java.util.concurrent.TimeUnit.SECONDS);
        e.ack();
        return e.type();
    }

    private static InetAddress address(String a) {
        return new InetSocketAddress(a, 0).getAddress();
    }

    @Test
    void aClientToAPortNobodyListensOnIsRefusedNamingThePortAndTheReason() throws Exception {
        try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(SERVER, 7481), quick(Duration.ofSeconds(20)))) {
            VerbsException e = assertThrows(VerbsException.class,
                    () -> RdmaClient.connect(new InetSocketAddress(SERVER, 7482), quick(Duration.ofSeconds(20))));
            assertEquals(Errno.ECONNREFUSED, e.errno(), e::getMessage);
            assertTrue(e.getMessage().matches("ECONNREFUSED: connect to 127\\.0\\.0\\.221:7482 \\(local 127\\.0\\.0\\.221:"
                    + "[0-9]+\\): REJECTED, reason 8 \\(invalid service ID: nothing listens on port 7482 there\\)"),
                    e::getMessage);
        }
    }

    @Test
    void aSecondServerOnAPortNamesTheAddressAndWhoHoldsIt() {
        try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(SERVER, 7483), new EndpointOptions())) {
            VerbsException e = assertThrows(VerbsException.class,
                    () -> RdmaServer.listen(new InetSocketAddress(SERVER, 7483), new EndpointOptions()));
            assertEquals(Errno.EADDRINUSE, e.errno());
            assertEquals("EADDRINUSE: bind to 127.0.0.221:7483: port 7483 of TCP is in use (bound to 127.0.0.221:7483)",
                    e.getMessage());
        }
    }

    @Test
    void anUnknownHostNamesTheStepTheHostAndThePort() {
        VerbsException e = assertThrows(VerbsException.class, () -> RdmaClient.connect("no-such-host.invalid", 7471));
        assertEquals(Errno.ENOENT, e.errno());
        assertTrue(e.getMessage().startsWith("ENOENT: resolve address of no-such-host.invalid:7471: the name "
                + "no-such-host.invalid does not resolve"), e::getMessage);
    }

    @Test
    void aCallInTheWrongStateNamesTheStepAndWhatComesFirst() throws Exception {
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            VerbsException e = assertThrows(VerbsException.class, () -> id.connect(new ConnParam()));
            assertEquals("EINVAL: connect: not possible in state IDLE (resolve the address and the route first)",
                    e.getMessage());
        }
    }

    @Test
    void aConnectOnABoundIdNamesItsLocalAddressAsLocal() throws Exception {
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            id.bindAddr(new InetSocketAddress("0.0.0.0", 7490));
            VerbsException e = assertThrows(VerbsException.class, () -> id.connect(new ConnParam()));
            assertEquals("EINVAL: connect (local 0.0.0.0:7490): not possible in state ADDR_BOUND", e.getMessage());
        }
    }

    @Test
    void aCallOnAClosedIdNamesTheStepAndThePeer() throws Exception {
        try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(SERVER, 7484), new EndpointOptions());
             CmEventChannel ch = new CmEventChannel()) {
            CmId id = ch.createId(PortSpace.TCP);
            id.resolveAddr(null, new InetSocketAddress(SERVER, 7484), 2000);
            id.close();
            VerbsException e = assertThrows(VerbsException.class, () -> id.resolveRoute(2000));
            assertTrue(e.getMessage().matches("EBADF: resolve route to 127\\.0\\.0\\.221:7484 \\(local 127\\.0\\.0\\.221:"
                    + "[0-9]+\\): the id is closed"), e::getMessage);
        }
    }

    @Test
    void anAcceptOnAClosedServerNamesTheServersAddress() {
        RdmaServer server = RdmaServer.listen(new InetSocketAddress(SERVER, 7485), new EndpointOptions());
        server.close();
        VerbsException e = assertThrows(VerbsException.class, server::accept);
        assertEquals("EBADF: accept on 127.0.0.221:7485: the server is closed", e.getMessage());
    }

    @Test
    void aCompletionWaitThatTimesOutNamesThePeerAndTheTimeout() throws Exception {
        try (RdmaServer server = RdmaServer.listen(new InetSocketAddress(SERVER, 7486), new EndpointOptions())) {
            java.util.concurrent.CompletableFuture<Endpoint> accepted = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return server.accept();
                        } catch (InterruptedException ex) {
                            throw new IllegalStateException(ex);
                        }
                    });
            try (Endpoint client = RdmaClient.connect(SERVER, 7486);
                 Endpoint conn = accepted.get(20, java.util.concurrent.TimeUnit.SECONDS)) {
                client.timeout(Duration.ofMillis(200));
                VerbsException e = assertThrows(VerbsException.class, () -> client.getRecvComp(new WorkCompletion()));
                assertTrue(e.getMessage().matches("ETIMEDOUT: get receive completion with 127\\.0\\.0\\.221:7486 \\(local "
                        + "127\\.0\\.0\\.221:[0-9]+\\): none within 200 ms"), e::getMessage);
            }
        }
    }

    @Test
    void aClientSourceWhoseRocePortAnotherProcessHoldsSaysToGiveAnotherSource() throws Exception {
        try (DatagramSocket other = new DatagramSocket(new InetSocketAddress("127.0.0.225", LocalDevices.udpPort))) {
            VerbsException e = assertThrows(VerbsException.class, () -> RdmaClient.connect(
                    new InetSocketAddress(SERVER, 7491), new EndpointOptions().source(address("127.0.0.225"))));
            assertEquals("EADDRINUSE: connect to 127.0.0.221:7491: cannot make a soft device on 127.0.0.225: its RoCEv2 "
                    + "UDP port " + LocalDevices.udpPort + " is taken (another process has a device there: give this "
                    + "side an address of its own, e.g. EndpointOptions.source(127.0.0.2))", e.getMessage());
        }
    }

    @Test
    void aSoftDeviceWhoseRocePortAnotherProcessHoldsSaysSoAndWhatToDo() throws Exception {
        try (DatagramSocket other = new DatagramSocket(new InetSocketAddress(TAKEN, LocalDevices.udpPort))) {
            VerbsException e = assertThrows(VerbsException.class,
                    () -> RdmaServer.listen(new InetSocketAddress(TAKEN, 7487), new EndpointOptions()));
            assertEquals(Errno.EADDRINUSE, e.errno(), e::getMessage);
            assertTrue(e.getMessage().startsWith("EADDRINUSE: listen on 127.0.0.224:7487: cannot make a soft device on "
                    + "127.0.0.224: its RoCEv2 UDP port " + LocalDevices.udpPort + " is taken (another process has a "
                    + "device there: listen on another address, e.g. 127.0.0.2, or end that process)"), e::getMessage);
        }
    }
}
