// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Verbs;

/**
 * rdma_resolve_addr with no source address: the host's route to the destination chooses the source
 * address, and the device is the one that has it; no route and a source no device has are ADDR_ERRORs
 * with the kernel's errno.
 */
class SourceRouteTest extends CmTestSupport {
    private final SourceRoute.Router kernel = SourceRoute.router;

    @AfterEach
    void theKernelsRouteAgain() {
        SourceRoute.router = kernel;
    }

    /**
     * The server: a UDP device on args[0] (UDP port args[1], sending to args[2]) listening on args[3];
     * prints the client's address.
     */
    public static void main(String[] args) throws Exception {
        Verbs.createDevice("soft:udp?name=srpeer&addr=" + args[0] + "&port=" + args[1] + "&peer-port=" + args[2]);
        try (CmEventChannel ch = new CmEventChannel(); CmId listener = ch.createId(PortSpace.TCP)) {
            listener.bindAddr(new InetSocketAddress(InetAddress.getByName(args[0]), Integer.parseInt(args[3])));
            listener.listen(4);
            System.out.println("LISTENING");
            CmEvent req = ch.getEvent(60, TimeUnit.SECONDS);
            req.ack();
            CmId child = req.id();
            new Ep(child);
            child.accept(new ConnParam());
            CmEvent est = ch.getEvent(60, TimeUnit.SECONDS);
            est.ack();
            System.out.println(est.type() + " FROM " + child.remoteAddress().getAddress().getHostAddress());
            CmEvent disc = ch.getEvent(60, TimeUnit.SECONDS);
            disc.ack();
            System.out.println(disc.type());
        }
        System.exit(0); // the device goes with the process
    }

    @Test
    void aClientWithNoSourceConnectsFromTheDeviceThatHasTheRoutesSourceAddress() throws Exception {
        InetAddress server = InetAddress.getByName("127.0.0.174");
        InetAddress routeSource;
        try (java.net.DatagramSocket s = new java.net.DatagramSocket(null)) {
            s.connect(new InetSocketAddress(server, 4791));
            routeSource = s.getLocalAddress(); // Linux: 127.0.0.1, the source of the local 127/8 route
        }
        // a decoy on the address nearest the server's: the longest common prefix is not the route
        InetAddress decoy = InetAddress.getByName("127.0.0.175");
        int roce = SoftDevices.freeUdpPort(29_000, routeSource, decoy, server);
        Device src = Verbs.createDevice("soft:udp?name=srsrc&addr=" + routeSource.getHostAddress() + "&port=" + roce);
        Device near = Verbs.createDevice("soft:udp?name=srdecoy&addr=127.0.0.175&port=" + roce);
        GsiOpener opener = CmEngine.INSTANCE.opener;
        CmEngine.INSTANCE.opener = GsiOpener.PROVIDER;
        try {
            connectFromTheRoutesSource(server, roce, roce, routeSource, src);
        } finally {
            CmEngine.INSTANCE.opener = opener;
            awaitNoAgents();
            Verbs.removeDevice(src);
            Verbs.removeDevice(near);
        }
    }

    @Test
    void anIpv6ClientWithNoSourceConnectsOverTheLoopbackAddress() throws Exception {
        InetAddress lo = InetAddress.getByName("::1");
        int mine;
        try {
            mine = SoftDevices.freeUdpPort(29_600, lo);
        } catch (IllegalStateException e) {
            org.junit.jupiter.api.Assumptions.abort("no IPv6 loopback address here: " + e.getMessage());
            return;
        }
        int theirs = SoftDevices.freeUdpPort(mine + 1, lo);
        // two devices on ::1 in two processes, told apart by their UDP ports; the route to ::1 leaves from ::1
        Device src = Verbs.createDevice("soft:udp?name=srv6&addr=::1&port=" + mine + "&peer-port=" + theirs);
        GsiOpener opener = CmEngine.INSTANCE.opener;
        CmEngine.INSTANCE.opener = GsiOpener.PROVIDER;
        try {
            connectFromTheRoutesSource(lo, theirs, mine, lo, src);
        } finally {
            CmEngine.INSTANCE.opener = opener;
            awaitNoAgents();
            Verbs.removeDevice(src);
        }
    }

    /** Starts the server JVM on {@code server}; connects with no source; the route's source and device are used. */
    private static void connectFromTheRoutesSource(InetAddress server, int udp, int peerUdp, InetAddress routeSource,
            Device src) throws Exception {
        int port = port();
        Process peer = new ProcessBuilder(List.of(System.getProperty("java.home") + "/bin/java",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                SourceRouteTest.class.getName(), server.getHostAddress(), Integer.toString(udp),
                Integer.toString(peerUdp), Integer.toString(port))).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader out = peer.inputReader(StandardCharsets.UTF_8);
             CmEventChannel cch = new CmEventChannel(); CmId client = cch.createId(PortSpace.TCP)) {
            assertEquals("LISTENING", out.readLine());
            quick(client);
            client.resolveAddr(null, new InetSocketAddress(server, port), 2000);
            expect(cch, CmEventType.ADDR_RESOLVED);
            assertEquals(routeSource, client.localAddress().getAddress(), "the route's source, not the nearest GID");
            assertEquals(src.name(), client.context().device().name());
            client.resolveRoute(2000);
            expect(cch, CmEventType.ROUTE_RESOLVED);
            Ep ce = new Ep(client);
            client.connect(new ConnParam());
            expect(cch, CmEventType.ESTABLISHED);
            assertEquals("ESTABLISHED FROM " + routeSource.getHostAddress(), out.readLine());
            client.disconnect();
            expect(cch, CmEventType.DISCONNECTED);
            assertEquals("DISCONNECTED", out.readLine(), "the server saw the DREQ");
            ce.close();
            assertTrue(peer.waitFor(WAIT_S, TimeUnit.SECONDS), "the server JVM did not end");
            assertEquals(0, peer.exitValue());
        } finally {
            peer.destroyForcibly();
        }
    }

    @Test
    void aDestinationThatIsAGidOfADeviceOnAnotherNetworkIsReachedFromTheRoutesSource() throws Exception {
        // rxe0 has fd77::1 in its GID table, but from the namespace of its peer fd77::1 is not a local
        // address: the route leaves from fd77::2, the --bind device's address, and that device is used
        Device mine = Verbs.createDevice("soft:loopback?name=srnet&fabric=srnet");
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            InetAddress source;
            try (org.rdma4j.verbs.Context c = mine.open()) {
                source = c.queryGid(1, 1).toInetAddress();
            }
            InetAddress dst = InetAddress.getByName("10.78.0.1");
            FakeRoceProvider.gid = org.rdma4j.verbs.Gid.of(dst);
            CmEngine.INSTANCE.devices.devicesForResolve(true);
            SourceRoute.router = to -> source;
            id.resolveAddr(null, new InetSocketAddress(dst, 7174), 100);
            CmEvent e = expect(ch, CmEventType.ADDR_RESOLVED);
            assertEquals(0, e.status());
            assertEquals("srnet", id.context().device().name());
            assertEquals(source, id.localAddress().getAddress());
        } finally {
            FakeRoceProvider.gid = null;
            CmEngine.INSTANCE.devices.devicesForResolve(true);
            awaitNoAgents();
            Verbs.removeDevice(mine);
        }
    }

    @Test
    void noRouteIsAnAddrErrorWithTheKernelsErrno() throws Exception {
        SourceRoute.router = dst -> {
            throw new SocketException("Network is unreachable");
        };
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            id.resolveAddr(null, new InetSocketAddress("198.51.100.9", 7174), 100);
            CmEvent e = expect(ch, CmEventType.ADDR_ERROR);
            assertEquals(-Errno.ENETUNREACH, e.status());
            assertTrue(e.detail().contains("no route to 198.51.100.9"), e.detail());
            assertNull(id.context(), "no device was taken");
        }
        SourceRoute.router = dst -> {
            throw new NoRouteToHostException("No route to host");
        };
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            id.resolveAddr(null, new InetSocketAddress("198.51.100.9", 7174), 100);
            assertEquals(-Errno.EHOSTUNREACH, expect(ch, CmEventType.ADDR_ERROR).status());
        }
    }

    @Test
    void aRouteSourceNoDeviceHasIsEnodevNamingThatAddressAndTheFix() throws Exception {
        SourceRoute.router = dst -> InetAddress.getByName("198.51.100.1");
        try (CmEventChannel ch = new CmEventChannel(); CmId id = ch.createId(PortSpace.TCP)) {
            id.resolveAddr(null, new InetSocketAddress("198.51.100.9", 7174), 100);
            CmEvent e = expect(ch, CmEventType.ADDR_ERROR);
            assertEquals(-Errno.ENODEV, e.status());
            assertTrue(e.detail().contains("leaves from 198.51.100.1") && e.detail().contains("--bind 198.51.100.1"),
                    e.detail());
        }
    }

    @Test
    void theEndpointApiSaysWhichSourceNoDeviceHas() {
        SourceRoute.router = dst -> InetAddress.getByName("198.51.100.1");
        org.rdma4j.verbs.VerbsException e = org.junit.jupiter.api.Assertions.assertThrows(
                org.rdma4j.verbs.VerbsException.class,
                () -> RdmaClient.connect(new InetSocketAddress("198.51.100.9", 7471), new EndpointOptions()));
        assertEquals(Errno.ENODEV, e.errno());
        assertTrue(e.getMessage().contains("198.51.100.1"), e.getMessage());
    }
}
