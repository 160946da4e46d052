// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine;

/** {@code rdma4j mckey} between devices of the in-process fabric: mckey's flow and messages on the cm's multicast. */
class MckeyCommandTest {
    private static final String DEV_R = "mk-recv";
    private static final String DEV_S = "mk-send";
    private static String addrR;
    private static String addrS;
    private static ExecutorService pool;

    @BeforeAll
    static void setUp() {
        for (String name : List.of(DEV_R, DEV_S)) {
            try {
                SoftDevices.createLoopback(name);
            } catch (VerbsException e) {
                if (e.errno() != Errno.EEXIST) {
                    throw e;
                }
            }
        }
        addrR = address(DEV_R);
        addrS = address(DEV_S);
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "mckey-test");
            t.setDaemon(true);
            return t;
        });
    }

    private static String address(String device) {
        try (Context c = Verbs.device(device).open()) {
            return c.queryGid(1, 1).toInetAddress().getHostAddress();
        }
    }

    @AfterAll
    static void tearDown() {
        pool.shutdownNow();
    }

    private static String group(String v6Suffix, String v4) {
        return addrR.contains(":") ? "ff0e::6b:" + v6Suffix : v4;
    }

    private record Live(Future<Integer> exit, StringWriter out, StringWriter err) {
        static Live start(String... args) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CommandLine cl = Rdma4j.commandLine();
            cl.setOut(new PrintWriter(out, true));
            cl.setErr(new PrintWriter(err, true));
            return new Live(pool.submit(() -> cl.execute(args)), out, err);
        }

        /** Waits (bounded) until {@code n} nodes said they joined. */
        Live joined(int n) {
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (out.toString().split("mckey: joined dgid", -1).length - 1 < n) {
                if (exit.isDone() || System.nanoTime() > giveUp) {
                    fail("the receiver never joined:\n" + this);
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

    @Test
    void aSendOnlySendersDatagramsReachEveryNodeOfAReceiverWithMckeysMessages() {
        String g = group("1", "239.107.0.1");
        Live recv = Live.start("mckey", "-m", g, "-b", addrR, "-c", "2", "-C", "20", "-S", "200", "--pause", "0",
                "--timeout", "30").joined(2);
        ToolRun send = ToolRun.of("mckey", "-m", g, "-b", addrS, "-s", "-o", "-C", "20", "-S", "200", "--pause", "0");
        ToolRun r = recv.finish();
        String all = "=== sender\n" + send + "\n=== receiver\n" + r;
        assertEquals(0, send.exitCode(), all);
        assertEquals(0, r.exitCode(), all);
        String gid = g.contains(":") ? g : "::ffff:" + g;
        assertEquals("mckey: starting client\nmckey: joining\nmckey: joined dgid: " + gid + " mlid 0x0 sl 0\n"
                + "initiating data transfers\ndata transfers complete\ntest complete\nreturn status 0\n", send.out(), all);
        assertEquals("mckey: starting server\nmckey: joining\nmckey: joined dgid: " + gid + " mlid 0x0 sl 0\n"
                + "mckey: joined dgid: " + gid + " mlid 0x0 sl 0\n"
                + "receiving data transfers\ndata transfers complete\ntest complete\nreturn status 0\n", r.out(), all);
    }

    @Test
    void aReceiverThatGetsTooFewDatagramsFailsWithinItsTimeout() {
        String g = group("2", "239.107.0.2");
        Live recv = Live.start("mckey", "-m", g, "-b", addrR, "-C", "10", "--pause", "0", "--timeout", "2")
                .joined(1);
        ToolRun send = ToolRun.of("mckey", "-m", g, "-b", addrS, "-s", "-C", "4", "--pause", "0");
        ToolRun r = recv.finish();
        String all = "=== sender\n" + send + "\n=== receiver\n" + r;
        assertEquals(0, send.exitCode(), all);
        assertEquals(1, r.exitCode(), all);
        assertTrue(r.err().contains("mckey: node 0 received 4 of 10 messages within the timeout"), all);
        assertTrue(r.out().contains("\ntest complete\nreturn status -110\n"), all);
    }

    @Test
    void withOnlyBindTheBindDeviceIsTheSourceAndTheDatagramsArrive() throws Exception {
        // no -b: the device --bind made is the source, as -b would make it (not one the route guesses)
        java.net.InetAddress r = java.net.InetAddress.getByName("127.0.11.1");
        java.net.InetAddress s = java.net.InetAddress.getByName("127.0.11.2");
        String port = String.valueOf(org.rdma4j.soft.SoftDevices.freeUdpPort(27_891, r, s));
        String g = "239.107.0.9";
        Live recv = Live.start("mckey", "-m", g, "--bind", "127.0.11.1", "--udp-port", port, "-C", "5", "--pause", "0",
                "--timeout", "30").joined(1);
        ToolRun send = ToolRun.of("mckey", "-m", g, "--bind", "127.0.11.2", "--udp-port", port, "-s", "-C", "5",
                "--pause", "0");
        ToolRun rr = recv.finish();
        String all = "=== sender\n" + send + "\n=== receiver\n" + rr;
        assertEquals(0, send.exitCode(), all);
        assertEquals(0, rr.exitCode(), all);
        assertTrue(rr.out().contains("mckey: joined dgid: ::ffff:" + g + " mlid 0x0 sl 0\n"), all);
    }

    @Test
    void unsupportedOptionsAreUsageErrors() {
        assertEquals(2, ToolRun.of("mckey", "-M", "ff12::1", "-b", addrR).exitCode());
        assertEquals(2, ToolRun.of("mckey", "-m", "239.1.1.1", "-p", "0x2").exitCode());
        assertEquals(2, ToolRun.of("mckey", "-m", "239.1.1.1", "-l").exitCode());
        ToolRun unicast = ToolRun.of("mckey", "-m", addrS, "-b", addrR);
        assertEquals(2, unicast.exitCode());
        assertTrue(unicast.err().contains("is not a multicast address"), unicast.toString());
    }
}
