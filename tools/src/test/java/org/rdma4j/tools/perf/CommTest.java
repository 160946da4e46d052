// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdma4j.verbs.Gid;

/**
 * {@link Comm} against a scripted peer that reads and writes exactly the bytes perftest's
 * perftest_communication.c does (derived from its code by hand): the server reads first, the client
 * writes first; sizes 16 (version), 4 + 4 (big-endian cycle buffer and cache line), 2 (MTU digits),
 * 108 (key with GID), 8 x 5 (report: big-endian size, iterations and three doubles), 5 ("done\0").
 */
@Timeout(30)
class CommTest {
    private static byte[] ascii(String s, int size) {
        byte[] b = new byte[size];
        byte[] t = s.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(t, 0, b, 0, t.length);
        return b;
    }

    private static byte[] read(DataInputStream in, int n) throws Exception {
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    @Test
    void clientSideMatchesACServerByteForByte() throws Exception {
        PerfDest mine = new PerfDest(0, 1, 0x11, 0x222222, 0x33, 0x4000, Gid.parse("::ffff:10.0.0.2"), 0);
        PerfDest theirs = new PerfDest(0, 1, 0x12, 0x654321, 0x44, 0x5000, Gid.parse("::ffff:10.0.0.1"), 0);
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                try (Socket s = ss.accept()) {
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    OutputStream out = s.getOutputStream();
                    // exchange_versions: sizeof(rem_version) = 16, the client's first
                    assertArrayEquals(ascii("6.06", 16), read(in, 16));
                    out.write(ascii("6.06", 16));
                    // check_sys_data: hton_int(cycle_buffer), then hton_int(cache_line_size)
                    assertArrayEquals(new byte[] {0, 0, 0x10, 0}, read(in, 4));
                    out.write(new byte[] {0, 0, 0x20, 0});
                    assertArrayEquals(new byte[] {0, 0, 0, 64}, read(in, 4));
                    out.write(new byte[] {0, 0, 0, (byte) 128});
                    // check_mtu: sprintf("%d") of the ibv_mtu value, sizeof(char[2]) bytes
                    assertArrayEquals(new byte[] {'5', 0}, read(in, 2));
                    out.write(new byte[] {'3', 0});
                    // ctx_hand_shake with a GID
                    assertArrayEquals(mine.toWire(true), read(in, 108));
                    out.write(theirs.toWire(true));
                    // xchg_bw_reports: hton_long(size), hton_long(iters) (peer >= 5.33), hton_double x 3
                    assertEquals(65536, ByteBuffer.wrap(read(in, 8)).getLong());
                    out.write(ByteBuffer.allocate(8).putLong(65536).array());
                    assertEquals(5000, ByteBuffer.wrap(read(in, 8)).getLong());
                    out.write(ByteBuffer.allocate(8).putLong(5000).array());
                    assertEquals(1234.5, ByteBuffer.wrap(read(in, 8)).getDouble());
                    out.write(ByteBuffer.allocate(8).putDouble(0).array());
                    assertEquals(1000.25, ByteBuffer.wrap(read(in, 8)).getDouble());
                    out.write(ByteBuffer.allocate(8).putDouble(0).array());
                    assertEquals(0.015, ByteBuffer.wrap(read(in, 8)).getDouble());
                    out.write(ByteBuffer.allocate(8).putDouble(0).array());
                    // ctx_close_connection: a key, then "done" with its NUL
                    assertArrayEquals(mine.toWire(true), read(in, 108));
                    out.write(theirs.toWire(true));
                    assertArrayEquals("done\0".getBytes(StandardCharsets.US_ASCII), read(in, 5));
                    out.write("done\0".getBytes(StandardCharsets.US_ASCII));
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            try (Comm c = Comm.connect("127.0.0.1", ss.getLocalPort(), 10_000)) {
                assertEquals("6.06", c.exchangeVersions());
                assertArrayEquals(new int[] {8192, 128}, c.exchangeSysData(4096, 64));
                assertEquals(3, c.exchangeMtu(5));
                assertEquals(theirs, c.handShake(mine, true));
                c.exchangeBwReport(new BwReport(65536, 5000, 1234.5, 1000.25, 0.015));
                c.closeConnection(mine, true);
            }
            peer.get(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void serverReadsFirstAndAnOldPeerIsRefused() throws Exception {
        ServerSocket ss = Comm.listen(InetAddress.getLoopbackAddress(), 0);
        int port = ss.getLocalPort();
        CompletableFuture<String> server = CompletableFuture.supplyAsync(() -> {
            try (Comm c = Comm.accept(ss, 10_000, 10_000)) {
                return c.exchangeVersions();
            } catch (PerfFailure f) {
                throw new RuntimeException(f);
            }
        });
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.getOutputStream().write(ascii("5.60", 16));
            assertArrayEquals(ascii("6.06", 16), read(new DataInputStream(s.getInputStream()), 16));
        }
        String remote = server.get(20, TimeUnit.SECONDS);
        assertEquals("5.60", remote);
        PerfFailure f = assertThrows(PerfFailure.class, () -> Comm.checkVersion(remote));
        assertEquals("Current implementation is not compatible with versions older than 5.70", f.lines().get(0));
    }

    @Test
    void aPeerThatGoesAwayIsAnErrorNotAHang() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture.runAsync(() -> {
                try (Socket s = ss.accept()) {
                    read(new DataInputStream(s.getInputStream()), 16);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            try (Comm c = Comm.connect("127.0.0.1", ss.getLocalPort(), 5_000)) {
                PerfFailure f = assertThrows(PerfFailure.class, c::exchangeVersions);
                assertTrue(f.lines().get(1).contains("closed"), f.lines().toString());
            }
        }
    }

    @Test
    void aSilentPeerTimesOut() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            try (Comm c = Comm.connect("127.0.0.1", ss.getLocalPort(), 300)) {
                PerfFailure f = assertThrows(PerfFailure.class, c::exchangeVersions);
                assertEquals("Couldn't read version", f.lines().get(0));
                assertEquals("rdma4j: the exchange with 127.0.0.1:" + ss.getLocalPort() + " did not finish within 0.3 s"
                        + " (--exchange-timeout): 0 of 16 bytes of the version arrived", f.lines().get(1));
            }
        }
    }

    @Test
    void atofAndStrtolAsC() {
        assertEquals(6.06, Comm.atof("6.06"));
        assertEquals(5.7, Comm.atof("5.70 beta"));
        assertEquals(0, Comm.atof("x"));
        assertEquals(3, Comm.strtol("3"));
        assertEquals(0, Comm.strtol(""));
    }
}
