// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdma4j.tools.device.GidText;
import org.rdma4j.tools.pingpong.PingpongRun.Pair;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Verbs;

/**
 * Server (soft0) and client (a second in-process device) in one JVM on two threads, talking TCP on
 * localhost and RoCEv2 over the in-process fabric, for all four tools.
 */
class PingpongCommandTest {
    private static final int ITERS = 200;
    private static final Pattern ADDRESS = Pattern.compile(
            "^  (local|remote) address: {1,2}LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6})[,:] GID (\\S+)$",
            Pattern.MULTILINE);

    @BeforeAll
    static void peer() {
        PingpongRun.ensurePeer();
    }

    static Stream<Arguments> runs() {
        List<Arguments> list = new ArrayList<>();
        for (String t : new String[] {"rc", "uc", "srq"}) {
            for (int size : new int[] {1, 4096, 65536}) {
                for (int mtu : new int[] {1024, 4096}) {
                    list.add(Arguments.of(t, size, mtu, false));
                }
            }
        }
        list.add(Arguments.of("rc", 1, 1024, true));
        list.add(Arguments.of("rc", 4096, 4096, true));
        list.add(Arguments.of("rc", 65536, 1024, true));
        list.add(Arguments.of("srq", 4096, 1024, true));
        // ud: one packet per message, so -s is bounded by the port MTU (4096 on the soft device) and there is no -m
        for (int size : new int[] {1, 1024, 4096}) {
            list.add(Arguments.of("ud", size, 0, false));
        }
        list.add(Arguments.of("ud", 4096, 0, true));
        return list.stream();
    }

    @ParameterizedTest(name = "{0} -s {1} -m {2} events={3}")
    @MethodSource("runs")
    void serverAndClientPingPong(String transport, int size, int mtu, boolean events) {
        int port = PingpongRun.freePort();
        List<String> common = PingpongRun.args(transport, "-p", String.valueOf(port), "-g", "1", "-s",
                String.valueOf(size), "-n", String.valueOf(ITERS), "-c");
        if (mtu != 0) {
            common.addAll(List.of("-m", String.valueOf(mtu)));
        }
        if (events) {
            common.add("-e");
        }
        List<String> client = new ArrayList<>(common);
        client.addAll(List.of("-d", PingpongRun.PEER, "localhost"));
        Pair p = PingpongRun.pair(common, client);

        assertEquals(0, p.server().exitCode(), p::toString);
        assertEquals(0, p.client().exitCode(), p::toString);
        for (PingpongRun r : List.of(p.server(), p.client())) {
            assertTrue(r.out().contains("\n" + (long) size * ITERS * 2 + " bytes in "), p::toString);
            assertTrue(r.out().matches("(?s).*\\n\\d+ bytes in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d Mbit/sec\\n.*"),
                    p::toString);
            assertTrue(r.out().matches("(?s).*\\n" + ITERS
                    + " iters in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d usec/iter\\n.*"), p::toString);
            assertFalse(r.out().contains("invalid data"), p::toString);
            assertEquals("", r.err(), p::toString);
        }
        int qps = transport.equals("srq") ? 16 : 1;
        List<String[]> serverLocal = addresses(p.server().out(), "local");
        List<String[]> serverRemote = addresses(p.server().out(), "remote");
        List<String[]> clientLocal = addresses(p.client().out(), "local");
        List<String[]> clientRemote = addresses(p.client().out(), "remote");
        assertEquals(qps, serverLocal.size(), p::toString);
        assertEquals(qps, clientLocal.size(), p::toString);
        for (int i = 0; i < qps; i++) {
            assertEquals(String.join(",", serverLocal.get(i)), String.join(",", clientRemote.get(i)), p::toString);
            assertEquals(String.join(",", clientLocal.get(i)), String.join(",", serverRemote.get(i)), p::toString);
        }
        assertEquals(gid("soft0"), serverLocal.get(0)[3], p::toString);
        assertEquals(gid(PingpongRun.PEER), clientLocal.get(0)[3], p::toString);
        if (transport.equals("ud")) {
            // ibv_ud_pingpong's local line has a colon before the GID
            assertTrue(p.server().out().matches("(?s)  local address:  LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}: GID .*"),
                    p::toString);
        }
    }

    /** LID, QPN, PSN and GID of each "local address" or "remote address" line, in order. */
    private static List<String[]> addresses(String out, String which) {
        List<String[]> list = new ArrayList<>();
        Matcher m = ADDRESS.matcher(out);
        while (m.find()) {
            if (m.group(1).equals(which)) {
                list.add(new String[] {m.group(2), m.group(3), m.group(4), m.group(5)});
            }
        }
        return list;
    }

    private static String gid(String device) {
        try (Context ctx = Verbs.open(device)) {
            Gid g = ctx.queryGid(1, 1);
            return GidText.inetNtop(g);
        }
    }

    @Test
    void withoutGidIndexThereIsNoGrhAndRtrFailsLikeOnRoce() {
        int port = PingpongRun.freePort();
        Pair p = PingpongRun.pair(PingpongRun.args("rc", "-p", String.valueOf(port), "-n", "5"),
                PingpongRun.args("rc", "-p", String.valueOf(port), "-n", "5", "-d", PingpongRun.PEER, "localhost"));
        assertEquals(1, p.server().exitCode(), p::toString);
        assertEquals(1, p.client().exitCode(), p::toString);
        List<String> lines = p.server().err().lines().toList();
        assertEquals("Failed to modify QP to RTR", lines.getFirst(), p::toString);
        assertTrue(lines.get(1).startsWith("rdma4j: EINVAL: "), p::toString);
        assertTrue(p.server().err().contains("pass -g <gid index>"), p::toString);
        assertEquals("Couldn't connect to remote QP", lines.getLast(), p::toString);
        assertTrue(p.server().out().contains("GID ::\n"), "no -g: the zero GID\n" + p);
        assertTrue(p.client().err().contains("Couldn't read/write remote address"), p::toString);
    }

    @Test
    void gidIndexWithoutEntryFailsBeforeListening() {
        PingpongRun r = PingpongRun.of("pingpong", "rc", "-g", "9", "-p", String.valueOf(PingpongRun.freePort()));
        assertEquals(1, r.exitCode(), r::toString);
        assertEquals("can't read sgid of index 9", r.err().lines().findFirst().orElseThrow(), r::toString);
        PingpongRun s = PingpongRun.of("pingpong", "srq", "-g", "9", "-p", String.valueOf(PingpongRun.freePort()));
        assertEquals(1, s.exitCode(), s::toString);
        assertTrue(s.err().startsWith("Could not get local gid for gid index 9\n"), s::toString);
    }

    @Test
    void warmupExchangesAreLeftOutOfTheTiming() {
        int port = PingpongRun.freePort();
        List<String> common = PingpongRun.args("rc", "-p", String.valueOf(port), "-g", "1", "-s", "64", "-n", "30",
                "--warmup", "10", "-c");
        List<String> client = new ArrayList<>(common);
        client.addAll(List.of("-d", PingpongRun.PEER, "localhost"));
        Pair p = PingpongRun.pair(common, client);
        assertEquals(0, p.server().exitCode(), p::toString);
        assertEquals(0, p.client().exitCode(), p::toString);
        for (PingpongRun r : List.of(p.server(), p.client())) {
            assertTrue(r.out().contains("\n" + 64L * 20 * 2 + " bytes in "), p::toString);
            assertTrue(r.out().matches("(?s).*\\n20 iters in \\d+\\.\\d\\d seconds = .*"), p::toString);
        }
        PingpongRun bad = PingpongRun.of("pingpong", "rc", "-n", "5", "--warmup", "5");
        assertEquals(1, bad.exitCode(), bad::toString); // as the C tools exit on a bad option
        assertTrue(bad.err().contains("--warmup 5 must be 0 or more and less than -n 5"), bad::toString);
    }
}
