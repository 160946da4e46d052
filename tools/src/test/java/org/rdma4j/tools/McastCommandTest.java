// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine;

/**
 * {@code rdma4j mcast}: receivers on several devices (each with one or more attached QPs) and a sender,
 * on threads of this JVM, over the in-process fabric (IPv6 GIDs) and over UDP on 127.0.0.x (an IPv4
 * group joined by every device); every datagram and every unicast answer is counted and checked.
 */
class McastCommandTest {
    private static final String PEER_A = "mc-peer-a";
    private static final String PEER_B = "mc-peer-b";
    private static final Pattern RECV_LINE = Pattern.compile(
            "^recv qp (0x[0-9a-f]{6}) seq (\\d+) from (\\S+) qpn (0x[0-9a-f]{6}) to (\\S+) len (\\d+) ok$",
            Pattern.MULTILINE);
    private static ExecutorService pool;

    @BeforeAll
    static void setUp() {
        for (String name : List.of(PEER_A, PEER_B)) {
            try {
                SoftDevices.createLoopback(name);
            } catch (VerbsException e) {
                if (e.errno() != Errno.EEXIST) {
                    throw e;
                }
            }
        }
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "mcast-test");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterAll
    static void tearDown() {
        pool.shutdownNow();
    }

    /** A command running on a thread of the pool, its output readable while it runs. */
    private record Live(Future<Integer> exit, StringWriter out, StringWriter err) {
        static Live start(String... args) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CommandLine cl = Rdma4j.commandLine();
            cl.setOut(new PrintWriter(out, true));
            cl.setErr(new PrintWriter(err, true));
            return new Live(pool.submit(() -> cl.execute(args)), out, err);
        }

        /** Waits (bounded) until the receiver says it is attached. */
        Live ready() {
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!out.toString().contains("waiting for")) {
                if (exit.isDone() || System.nanoTime() > giveUp) {
                    fail("the receiver never got ready:\n" + this);
                }
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            return this;
        }

        ToolRun finish() {
            try {
                return new ToolRun(exit.get(60, TimeUnit.SECONDS), out.toString(), err.toString());
            } catch (Exception e) {
                exit.cancel(true);
                return fail("the command did not finish: " + e + "\n" + this);
            }
        }

        @Override
        public String toString() {
            return "--- out\n" + out + "--- err\n" + err;
        }
    }

    private static List<String> args(String... a) {
        return new ArrayList<>(List.of(a));
    }

    @Test
    void everyAttachedQpOfEveryDeviceGetsEveryDatagramAndAnswersIt() {
        String group = "ff0e::4d:77:1";
        Live a = Live.start("mcast", "recv", "-d", PEER_A, "-m", group, "-n", "20", "-s", "100", "-q", "2",
                "--reply", "-t", "30").ready();
        Live b = Live.start("mcast", "recv", "-d", PEER_B, "-m", group, "-n", "20", "-s", "100", "--reply", "-t",
                "30").ready();
        ToolRun send = ToolRun.of("mcast", "send", "-d", "soft0", "-m", group, "-n", "20", "-s", "100", "--reply",
                "-r", "3", "-t", "30");
        ToolRun ra = a.finish();
        ToolRun rb = b.finish();
        String all = "=== sender\n" + send + "\n=== receiver a\n" + ra + "\n=== receiver b\n" + rb;

        assertEquals(0, send.exitCode(), all);
        assertEquals(0, ra.exitCode(), all);
        assertEquals(0, rb.exitCode(), all);
        assertTrue(send.out().contains("\nmcast send: sent=20 replies=60 repliers=3 bad=0\n"), all);
        assertTrue(ra.out().contains("\nmcast recv: qps=2 received=40 bad=0 replies=40\n"), all);
        assertTrue(rb.out().contains("\nmcast recv: qps=1 received=20 bad=0 replies=20\n"), all);
        // Each receiving QP saw each sequence number once, from the sender's GID and QPN, sent to the group.
        String senderQpn = matchOne("from QP (0x[0-9a-f]{6}), GID", send.out());
        String senderGid = matchOne("GID (\\S+)\\n", send.out());
        for (ToolRun r : List.of(ra, rb)) {
            Matcher m = RECV_LINE.matcher(r.out());
            java.util.Set<String> seen = new java.util.HashSet<>();
            while (m.find()) {
                assertEquals(senderGid, m.group(3), all);
                assertEquals(senderQpn, m.group(4), all);
                assertEquals(group, m.group(5), all);
                assertEquals("140", m.group(6), "40 bytes of GRH + 100");
                assertTrue(seen.add(m.group(1) + "/" + m.group(2)), "a duplicate: " + m.group());
            }
            assertEquals(r == ra ? 40 : 20, seen.size(), all);
        }
        assertFalse(send.out().contains("BAD"), all);
    }

    @Test
    void overUdpEveryDeviceThatJoinedTheIpGroupReceivesIt() throws Exception {
        InetAddress r1 = InetAddress.getByName("127.0.0.1");
        InetAddress r2 = InetAddress.getByName("127.0.0.3");
        InetAddress s = InetAddress.getByName("127.0.0.2");
        String port = String.valueOf(SoftDevices.freeUdpPort(27791, r1, r2, s));
        String group = "239.78.0.1";
        Live a = Live.start("mcast", "recv", "--bind", "127.0.0.1", "--udp-port", port, "-d", "mc-udp-a", "-m", group,
                "-n", "30", "--reply", "-t", "30").ready();
        Live b = Live.start("mcast", "recv", "--bind", "127.0.0.3", "--udp-port", port, "-d", "mc-udp-b", "-m", group,
                "-n", "30", "-q", "2", "--reply", "-t", "30").ready();
        ToolRun send = ToolRun.of("mcast", "send", "--bind", "127.0.0.2", "--udp-port", port, "-d", "mc-udp-s", "-m",
                group, "-n", "30", "--reply", "-r", "3", "-t", "30");
        ToolRun ra = a.finish();
        ToolRun rb = b.finish();
        String all = "=== sender\n" + send + "\n=== receiver a\n" + ra + "\n=== receiver b\n" + rb;

        assertEquals(0, send.exitCode(), all);
        assertEquals(0, ra.exitCode(), all);
        assertEquals(0, rb.exitCode(), all);
        assertTrue(send.out().contains("\nmcast send: sent=30 replies=90 repliers=3 bad=0\n"), all);
        assertTrue(ra.out().contains("\nmcast recv: qps=1 received=30 bad=0 replies=30\n"), all);
        assertTrue(rb.out().contains("\nmcast recv: qps=2 received=60 bad=0 replies=60\n"), all);
        // The GRH area holds the IPv4 header: the sender's address and the group.
        assertTrue(ra.out().contains(" from ::ffff:127.0.0.2 qpn "), all);
        assertTrue(ra.out().contains(" to ::ffff:239.78.0.1 len 104 ok\n"), all);
        assertTrue(send.out().contains("reply seq 0 from ::ffff:127.0.0.3 qpn "), all);
        assertTrue(send.out().contains("reply seq 29 from ::ffff:127.0.0.1 qpn "), all);
    }

    @Test
    void aReceiverWithAnotherQkeyGetsNothingAndTimesOut() {
        String group = "ff0e::4d:77:2";
        Live a = Live.start("mcast", "recv", "-d", PEER_A, "-m", group, "-n", "3", "-Q", "0x22222222", "-t", "2")
                .ready();
        ToolRun send = ToolRun.of("mcast", "send", "-d", "soft0", "-m", group, "-n", "3");
        ToolRun ra = a.finish();
        assertEquals(0, send.exitCode(), send::toString);
        assertTrue(send.out().contains("\nmcast send: sent=3 replies=0 repliers=0 bad=0\n"), send::toString);
        assertEquals(1, ra.exitCode(), ra::toString);
        assertTrue(ra.err().contains("rdma4j mcast: timeout after 2 s"), ra::toString);
        assertTrue(ra.err().contains("received 0 of 3"), ra::toString);
        assertTrue(ra.out().endsWith("mcast recv: qps=1 received=0 bad=0 replies=0\n"), ra::toString);
    }

    @Test
    void aSenderWaitingForAnswersThatNeverComeTimesOut() {
        ToolRun send = ToolRun.of("mcast", "send", "-d", "soft0", "-m", "ff0e::4d:77:3", "-n", "2", "--reply", "-t",
                "1");
        assertEquals(1, send.exitCode(), send::toString);
        assertTrue(send.err().contains("timeout after 1 s: 0 of 1 receivers answered every datagram"), send::toString);
    }

    @Test
    void aGroupOfTheOtherIpVersionThanTheGidIsAFailure() {
        // soft0's GID index 1 is an IPv6 address
        ToolRun run = ToolRun.of("mcast", "recv", "-d", "soft0", "-m", "239.1.2.3", "-t", "1");
        assertEquals(1, run.exitCode(), run::toString);
        assertTrue(run.err().contains("are not of the same IP version"), run::toString);
        assertFalse(run.err().contains("\tat "), run::toString);
    }

    @Test
    void aDatagramLargerThanTheMtuIsRefused() {
        ToolRun run = ToolRun.of("mcast", "send", "-d", "soft0", "-m", "ff0e::4d:77:4", "-s", "8192");
        assertEquals(1, run.exitCode(), run::toString);
        assertTrue(run.err().contains("-s 8192 is larger than the port's active MTU (4096)"), run::toString);
    }

    @Test
    void helpExplainsBothRoles() {
        ToolRun top = ToolRun.of("--help");
        assertTrue(top.out().contains("  mcast "), top::toString);
        ToolRun run = ToolRun.of("help", "mcast");
        assertEquals(0, run.exitCode(), run::toString);
        assertTrue(run.out().contains("Usage: rdma4j mcast"), run::toString);
        assertTrue(run.out().contains("recv"), run::toString);
        assertTrue(run.out().contains("send"), run::toString);
        assertTrue(run.out().contains("0xFFFFFF"), run::toString);
        ToolRun recv = ToolRun.of("mcast", "recv", "--help");
        assertEquals(0, recv.exitCode(), recv::toString);
        assertTrue(recv.out().contains("--reply"), recv::toString);
        assertTrue(recv.out().contains("--qps"), recv::toString);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "recv -n 1|Missing required option: '--group=<group>'",
        "recv -m 10.0.0.1|-m 10.0.0.1 is not a multicast group",
        "send -m fe80::1|-m fe80::1 is not a multicast group",
        "recv -m lots|-m lots is not a GID or an IP address",
        "recv -m 239.1.2.3 -n 0|-n 0: the number of datagrams must be 1..100000",
        "send -m 239.1.2.3 -s 3|-s 3: the size must be 4..65536",
        "recv -m 239.1.2.3 -q 17|-q 17: the number of QPs must be 1..16",
        "send -m 239.1.2.3 -r 0|-r 0: the number of receivers must be 1..64",
        "send -m 239.1.2.3 -t 0|-t 0: the timeout must be 1..86400 seconds",
        "send -m 239.1.2.3 -Q 0x1ffffffff|Invalid value for option '--qkey'",
        "send -m 239.1.2.3 -g -1|-g -1: the GID index must be 0..255",
        "send -m 239.1.2.3 -q 2|Unknown options: '-q', '2'",
        "recv -m 239.1.2.3 -r 2|Unknown options: '-r', '2'",
        "recv -m 239.1.2.3 --udp-mode fast|--udp-mode fast is not one of auto, native, raw, channel",
    })
    void badFlagIsAUsageErrorWithExitCode2(String line, String message) {
        List<String> a = args("mcast");
        a.addAll(List.of(line.split(" ")));
        ToolRun run = ToolRun.of(a.toArray(String[]::new));
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith(message), run::toString);
        assertTrue(run.err().contains("try 'rdma4j mcast " + a.get(1) + " --help'"), run::toString);
        assertFalse(run.err().contains("\tat "), run::toString);
        assertEquals("", run.out(), "nothing runs");
    }

    @Test
    void withoutARoleItSaysWhichOnesThereAre() {
        ToolRun run = ToolRun.of("mcast");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().startsWith("Missing role: say which one, recv or send"), run::toString);
    }

    private static String matchOne(String regex, String text) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertTrue(m.find(), () -> regex + " not in\n" + text);
        return m.group(1);
    }
}
