// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.io.BufferedReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpEndpoint;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePairBuilder;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * A burst of one SEND on each of {@code n} connected RC QPs between two JVMs over UDP on loopback (a main
 * class, not JMH): the sender posts all n SENDs back to back, the receiver has one receive posted on
 * each QP; both report their retransmission counters, which on a lossless link must be 0.
 * {@snippet lang=sh :
 * java --enable-native-access=ALL-UNNAMED -cp bench/target/benchmarks.jar org.rdma4j.bench.QpBurst n=10000
 * }
 * Options: {@code n} QPs (default 10000), {@code timeout} the QPs' local ACK timeout code (default 14, as
 * ibv_rc_pingpong and perftest), {@code a}/{@code b} the addresses (default 127.0.0.5 sends, 127.0.0.6
 * receives), {@code seconds} the bound of every wait (default 120). The receiver is a child JVM.
 */
public final class QpBurst {
    private QpBurst() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>(Map.of("n", "10000", "timeout", "14", "a", "127.0.0.5",
                "b", "127.0.0.6", "seconds", "120", "role", "sender"));
        for (String a : args) {
            String[] kv = a.split("=", 2);
            o.put(kv[0], kv.length > 1 ? kv[1] : "");
        }
        int n = Integer.parseInt(o.get("n"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(o.get("seconds")));
        if (o.get("role").equals("receiver")) {
            receiver(n, o, deadline);
        } else {
            sender(n, o, deadline);
        }
    }

    /** One side: device, n QPs on one CQ, one MR of n 64-byte slots. */
    private static final class Side implements AutoCloseable {
        final Device device;
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion mr;
        final List<PreparedQueuePair> qps = new ArrayList<>();

        Side(String name, String addr, int port, int n, int timeout) throws Exception {
            device = SoftDevices.createUdp(name + "-" + ProcessHandle.current().pid(), InetAddress.getByName(addr),
                    port, port, UdpLink.Mode.AUTO);
            ctx = device.open();
            pd = ctx.allocPd();
            cq = ctx.createCq(Math.min((1 << 16) - 1, n + 64));
            MemorySegment buf = Arena.ofShared().allocate(64L * n, 64);
            mr = pd.regMr(buf, Access.LOCAL_WRITE);
            for (int i = 0; i < n; i++) {
                qps.add(new QueuePairBuilder(pd, QpType.RC, cq, cq).cap(new QpCap(2, 2, 1, 1, 16)).port(1)
                        .gidIndex(1).mtu(Mtu.MTU_1024).timeout(timeout).retryCnt(7).rnrRetry(7).prepare());
            }
        }

        String endpoints() {
            StringBuilder sb = new StringBuilder();
            for (PreparedQueuePair q : qps) {
                sb.append(sb.isEmpty() ? "" : " ").append(q.endpoint());
            }
            return sb.toString();
        }

        void connect(String line) {
            String[] eps = line.trim().split(" ");
            for (int i = 0; i < qps.size(); i++) {
                qps.get(i).handshake(QpEndpoint.parse(eps[i]));
            }
        }

        /** Polls until {@code n} completions came (all successful), or throws at the deadline. */
        long reap(int n, long deadline, String what) {
            WorkCompletion[] wcs = WorkCompletion.array(64);
            int got = 0;
            long first = 0;
            while (got < n) {
                int k = cq.poll(wcs);
                for (int i = 0; i < k; i++) {
                    if (wcs[i].status() != WcStatus.SUCCESS) {
                        throw new IllegalStateException(what + ": " + wcs[i]);
                    }
                }
                got += k;
                if (k > 0 && first == 0) {
                    first = System.nanoTime();
                }
                if (k == 0 && System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(what + ": " + got + " of " + n + " completions within the bound");
                }
            }
            return first;
        }

        String counters() {
            Map<String, Long> c = new TreeMap<>(ctx.counters(1));
            StringBuilder sb = new StringBuilder("retransmits=" + c.get("retransmits"));
            c.forEach((k, v) -> {
                if (v != 0 && !k.equals("retransmits")) {
                    sb.append(' ').append(k).append('=').append(v);
                }
            });
            return sb.toString();
        }

        @Override
        public void close() {
            for (PreparedQueuePair q : qps) {
                q.qp().close();
            }
            cq.close();
            mr.close();
            pd.close();
            ctx.close();
            SoftDevices.remove(device);
        }
    }

    private static void sender(int n, Map<String, String> o, long deadline) throws Exception {
        int port = SoftDevices.freeUdpPort(30000 + (int) (ProcessHandle.current().pid() % 2000),
                InetAddress.getByName(o.get("a")), InetAddress.getByName(o.get("b")));
        List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path")));
        System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("rdma4j."))
                .forEach(k -> cmd.add("-D" + k + "=" + System.getProperty(k)));
        cmd.addAll(List.of(QpBurst.class.getName(), "role=receiver", "n=" + n, "timeout=" + o.get("timeout"),
                "b=" + o.get("b"), "port=" + port, "seconds=" + o.get("seconds")));
        Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (Side s = new Side("burst-send", o.get("a"), port, n, Integer.parseInt(o.get("timeout")));
             BufferedReader in = child.inputReader(StandardCharsets.UTF_8);
             PrintStream out = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8)) {
            String theirs = in.readLine();
            out.println(s.endpoints());
            s.connect(theirs);
            SendWorkRequest[] wrs = new SendWorkRequest[n];
            for (int i = 0; i < n; i++) {
                wrs[i] = new SendWorkRequest().opcode(org.rdma4j.verbs.WrOpcode.SEND)
                        .flags(SendFlag.SIGNALED | SendFlag.INLINE).wrId(i)
                        .sge(s.mr.segment().address() + 64L * i, 8, s.mr.lkey());
            }
            int rounds = Integer.parseInt(o.getOrDefault("rounds", "1"));
            for (int r = 1; r <= rounds; r++) {
                if (!"READY".equals(in.readLine())) {
                    throw new IllegalStateException("the receiver JVM did not get ready");
                }
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    s.qps.get(i).qp().postSend(wrs[i]);
                }
                long posted = System.nanoTime();
                long first = s.reap(n, deadline, "sender");
                long t1 = System.nanoTime();
                String line = in.readLine();
                System.out.printf(Locale.ROOT, "burst %d: one SEND on each of %d RC QPs (timeout %s): posted in %.1f ms, "
                        + "first completion after %.1f ms, all after %.1f ms%n", r, n, o.get("timeout"),
                        (posted - t0) / 1e6, (first - t0) / 1e6, (t1 - t0) / 1e6);
                System.out.println("  sender (since start):   " + s.counters());
                System.out.println("  receiver (since start): " + line);
                out.println(r < rounds ? "NEXT" : "DONE");
            }
            child.waitFor(30, TimeUnit.SECONDS);
        } finally {
            child.destroyForcibly();
        }
    }

    private static void receiver(int n, Map<String, String> o, long deadline) throws Exception {
        try (Side s = new Side("burst-recv", o.get("b"), Integer.parseInt(o.get("port")), n,
                Integer.parseInt(o.get("timeout")))) {
            BufferedReader in = new BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (int i = 0; i < n; i++) {
                RecvWorkRequest r = new RecvWorkRequest();
                r.wrId(i).sge(s.mr.segment().address() + 64L * i, 64, s.mr.lkey());
                s.qps.get(i).qp().postRecv(r);
            }
            System.out.println(s.endpoints());
            System.out.flush();
            s.connect(in.readLine());
            String next = "NEXT";
            while ("NEXT".equals(next)) {
                System.out.println("READY");
                System.out.flush();
                long r0 = System.nanoTime();
                long first = s.reap(n, deadline, "receiver");
                // the sender's completions follow the ACKs; it says when it has them all
                System.out.println(String.format(Locale.ROOT, "first receive after %.1f ms, last after %.1f ms; ",
                        (first - r0) / 1e6, (System.nanoTime() - r0) / 1e6) + s.counters());
                System.out.flush();
                next = in.readLine();
                if ("NEXT".equals(next)) {
                    for (int i = 0; i < n; i++) {
                        RecvWorkRequest r = new RecvWorkRequest();
                        r.wrId(i).sge(s.mr.segment().address() + 64L * i, 64, s.mr.lkey());
                        s.qps.get(i).qp().postRecv(r);
                    }
                }
            }
        }
    }
}
