// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.rdma4j.tools.perf.LoopbackTest.BW_LINE;
import static org.rdma4j.tools.perf.LoopbackTest.LAT_LINE;
import static org.rdma4j.tools.perf.LoopbackTest.assertPattern;
import static org.rdma4j.tools.perf.LoopbackTest.recvOffset;
import static org.rdma4j.tools.perf.LoopbackTest.rows;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.Verbs;

/**
 * -R end to end in one process: both sides' exchange over a connection-manager QP and the test QPs
 * connected by rdma4j's CM (REQ/REP/RTU as MADs on the two soft devices' QP1s), every test kind with
 * the data checks of {@link LoopbackTest}; then the failures: no listener, no client, a peer that stops
 * answering. Small -n: behaviour, no timing.
 */
@Timeout(120)
class LoopbackCmTest {
    private static Device devA;
    private static Device devB;
    private static InetAddress ipA;
    private static InetAddress ipB;
    private static int port = 30_000 + (int) (ProcessHandle.current().pid() % 1000);

    @BeforeAll
    static void devices() {
        devA = Verbs.createDevice("soft:loopback?name=perfcm-a&fabric=perfcm");
        devB = Verbs.createDevice("soft:loopback?name=perfcm-b&fabric=perfcm");
        try (Context a = devA.open(); Context b = devB.open()) {
            ipA = a.queryGid(1, 1).toInetAddress();
            ipB = b.queryGid(1, 1).toInetAddress();
        }
    }

    /** The ids of a closed connection keep their device until their time wait ends: removal waits for that. */
    @AfterAll
    static void remove() throws InterruptedException {
        for (Device d : new Device[] {devA, devB}) {
            for (int i = 0; ; i++) {
                try {
                    Verbs.removeDevice(d);
                    break;
                } catch (org.rdma4j.verbs.VerbsException e) {
                    if (i == 600) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
            }
        }
    }

    private static LoopbackTest.Run run(String test, String... args) {
        String[] all = new String[args.length + 1];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "-R";
        LoopbackTest.Run r = LoopbackTest.run(test, all);
        assertTrue(r.out().contains(" rdma_cm QPs\t : ON\n Data ex. method : rdma_cm\n"), r.out());
        assertFalse(r.out().contains("RKey"), "perftest's -R prints the address lines as SEND's\n" + r.out());
        String server = r.pair().serverOut.toString();
        assertTrue(server.contains(" Waiting for client rdma_cm QP to connect\n"), server);
        for (PerfResources side : new PerfResources[] {r.server(), r.client()}) {
            assertNotNull(side.cm, "the QPs belong to connection-manager ids");
            for (var qp : side.qps) {
                QpState s = qp.state();
                assertTrue(s == QpState.RTS || s == QpState.ERR, "the CM moved the QP on: " + s);
            }
        }
        return r;
    }

    @Test
    void writeLatOverCmQps() {
        LoopbackTest.Run r = run("write_lat", "-n", "50", "-s", "64");
        try {
            List<long[]> rows = rows(LAT_LINE, r.out());
            assertEquals(1, rows.size(), r.out());
            assertEquals(50, rows.get(0)[1]);
            for (PerfResources side : new PerfResources[] {r.server(), r.client()}) {
                assertEquals((byte) 50, side.buf.get(ValueLayout.JAVA_BYTE, recvOffset(side, 0) + 63));
                assertPattern(side.buf, recvOffset(side, 0), 63);
            }
        } finally {
            r.pair().close();
        }
    }

    @Test
    void writeBwWithTwoCmQps() {
        LoopbackTest.Run r = run("write_bw", "-n", "40", "-s", "65536", "-q", "2");
        try {
            assertEquals(80, rows(BW_LINE, r.out()).get(0)[1], r.out());
            for (int q = 0; q < 2; q++) {
                assertPattern(r.server().buf, recvOffset(r.server(), q), 65536);
            }
            assertEquals(2, r.server().qps.length);
        } finally {
            r.pair().close();
        }
    }

    @Test
    void readLatAndReadBwNeedTheResponderResourcesTheyAsk() {
        for (String t : new String[] {"read_lat", "read_bw"}) {
            LoopbackTest.Run r = run(t, "-n", "20", "-s", "4096");
            try {
                assertEquals(20, rows(t.endsWith("lat") ? LAT_LINE : BW_LINE, r.out()).get(0)[1], r.out());
                MemorySegment c = r.client().buf;
                for (int i = 0; i < 4096; i++) {
                    assertEquals(0, c.get(ValueLayout.JAVA_BYTE, i), t);
                }
            } finally {
                r.pair().close();
            }
        }
    }

    @Test
    void sendLatAndSendBwDeliver() {
        LoopbackTest.Run r = run("send_lat", "-n", "30", "-s", "300");
        try {
            assertEquals(30, rows(LAT_LINE, r.out()).get(0)[1], r.out());
            for (PerfResources side : new PerfResources[] {r.server(), r.client()}) {
                assertPattern(side.buf, recvOffset(side, 0), 300);
            }
        } finally {
            r.pair().close();
        }
        r = run("send_bw", "-n", "64", "-s", "2048");
        try {
            assertEquals(64, rows(BW_LINE, r.out()).get(0)[1], r.out());
            assertEquals(64, rows(BW_LINE, r.pair().serverOut.toString()).get(0)[1], r.pair().serverOut.toString());
            assertPattern(r.server().buf, recvOffset(r.server(), 0), 2048);
        } finally {
            r.pair().close();
        }
    }

    @Test
    void atomicsCountEveryOperation() {
        LoopbackTest.Run r = run("atomic_lat", "-n", "25");
        try {
            assertEquals(25, r.server().buf.get(ValueLayout.JAVA_LONG_UNALIGNED, recvOffset(r.server(), 0)));
            assertEquals(24, r.client().buf.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
        } finally {
            r.pair().close();
        }
        r = run("atomic_bw", "-n", "640");
        try {
            long sum = 0;
            for (long slot = 0; slot < 4096 / 64; slot++) {
                sum += r.server().buf.get(ValueLayout.JAVA_LONG_UNALIGNED, recvOffset(r.server(), 0) + slot * 64);
            }
            assertEquals(640, sum);
        } finally {
            r.pair().close();
        }
    }

    @Test
    void keyMessagesAreTheBinaryStructOfFiftySixBytes() {
        PerfDest d = new PerfDest(0x12, 16, 0xabcdef, 0x123456, 0xdeadbeef, 0x7f00_1234_5678L,
                Gid.of(InetAddress.getLoopbackAddress()), 0);
        byte[] b = d.toStruct();
        assertEquals(56, b.length);
        assertEquals(0, b[0]);
        assertEquals(0x12, b[3], "big-endian lid");
        assertEquals((byte) 0xde, b[16], "rkey at 16");
        assertEquals((byte) 0x78, b[31], "vaddr at 24..31");
        assertEquals(d, PerfDest.fromStruct(b));
        assertThrows(IllegalArgumentException.class, () -> PerfDest.fromStruct(new byte[64]));
    }

    @Test
    void aClientWithoutListenerFailsWithRejectedNotAHang() throws Exception {
        int busy = ++port;
        int idle = ++port;
        // the server's CM agent runs (it listens on another port), so the REQ gets a REJ at once
        CmLink l = CmLink.listen(new InetSocketAddress(ipB, busy), 10_000);
        try {
            long t0 = System.nanoTime();
            PerfFailure f = assertThrows(PerfFailure.class,
                    () -> CmLink.connect(new InetSocketAddress(ipA, 0), new InetSocketAddress(ipB, idle), 14, 10_000));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(String.join("\n", f.lines()).contains("REJECTED"), f.lines().toString());
            assertTrue(String.join("\n", f.lines()).contains("nothing listens there"), f.lines().toString());
            assertTrue(ms < 10_000, "before the timeout: " + ms + " ms");
        } finally {
            l.close();
        }
    }

    @Test
    void aServerNobodyConnectsToGivesUpAtTheTimeout() throws Exception {
        CmLink l = CmLink.listen(new InetSocketAddress(ipB, ++port), 1000);
        try {
            PerfFailure f = assertThrows(PerfFailure.class, () -> l.accept(1000, 14));
            assertTrue(String.join("\n", f.lines()).contains("no client connected within 1 s"), f.lines().toString());
        } finally {
            l.close();
        }
    }

    @Test
    void aPeerThatGoesAwayEndsTheExchangeWithAnError() throws Exception {
        int p = ++port;
        CmLink l = CmLink.listen(new InetSocketAddress(ipB, p), 10_000);
        CompletableFuture<Comm> server = CompletableFuture.supplyAsync(() -> {
            try {
                l.accept(10_000, 14);
                return new Comm(l, false);
            } catch (PerfFailure f) {
                throw new IllegalStateException(f.lines().toString());
            }
        });
        Comm client = new Comm(CmLink.connect(new InetSocketAddress(ipA, 0), new InetSocketAddress(ipB, p), 14,
                10_000), true);
        Comm s = server.get(20, TimeUnit.SECONDS);
        try {
            // one exchange works both ways
            CompletableFuture<String> theirs = CompletableFuture.supplyAsync(() -> {
                try {
                    return s.exchangeVersions();
                } catch (PerfFailure f) {
                    throw new IllegalStateException(f.lines().toString());
                }
            });
            assertEquals(Comm.VERSION, client.exchangeVersions());
            assertEquals(Comm.VERSION, theirs.get(20, TimeUnit.SECONDS));
            // then the client goes away: the server's next read fails (DISCONNECTED), within its timeout
            client.close();
            s.timeoutMs(5_000);
            PerfFailure f = assertThrows(PerfFailure.class, () -> s.exchangeVersions());
            assertFalse(f.lines().isEmpty());
        } finally {
            s.close();
            l.close();
        }
    }
}
