// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.io.BufferedReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * How the connection manager scales on the soft device (a main class, not JMH, not a test): RC
 * connections made through the CM (resolve, QP, REQ/REP/RTU over the devices' real QP1), each verified
 * by one exchange (the client SENDs its index, the server SENDs it back), all held open at once.
 * <ul>
 *   <li>{@code mode=inproc}: two loopback devices in this JVM, a server thread and the client thread;
 *       connections established per second, and the heap per idle connected RC QP (with its CM id).</li>
 *   <li>{@code mode=udp}: the server here on a UDP device at 127.0.0.1, the client a second JVM on
 *       127.0.0.2 (both on one RoCEv2 port number): the same, across processes.</li>
 * </ul>
 * {@snippet lang=sh :
 * B="java --enable-native-access=ALL-UNNAMED -Xmx4g -cp bench/target/benchmarks.jar org.rdma4j.bench.CmScaleBenchmark"
 * $B mode=inproc n=10000
 * $B mode=udp n=10000
 * # -Drdma4j.cm.window=0 -Drdma4j.cm.batch=1: the CM without its flow window and batched drain (as before)
 * }
 * Prints one line per figure. Every wait is bounded ({@code seconds=S}, default 120): a run that does
 * not finish says where it stopped.
 */
public final class CmScaleBenchmark {
    private static final int SLOT = 64;

    private CmScaleBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>(Map.of("mode", "inproc", "n", "10000", "seconds", "120", "port", "7471"));
        for (String a : args) {
            String[] kv = a.split("=", 2);
            o.put(kv[0], kv.length > 1 ? kv[1] : "");
        }
        int n = Integer.parseInt(o.get("n"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(o.get("seconds")));
        switch (o.get("mode")) {
            case "inproc" -> {
                // rounds=R: R runs one after the other in this JVM, each on new devices; the first is cold
                // (the JIT has not compiled the CM's and the engine's paths yet), the later ones warm
                int rounds = Integer.parseInt(o.getOrDefault("rounds", "1"));
                for (int r = 1; r <= rounds; r++) {
                    inproc(n, Integer.parseInt(o.get("port")), deadline, rounds == 1 ? "" : " round " + r);
                }
            }
            case "udp" -> udpServer(n, Integer.parseInt(o.get("port")), deadline);
            case "udp-client" -> udpClient(n, o.get("addr"), Integer.parseInt(o.get("roce")), o.get("server"),
                    Integer.parseInt(o.get("port")), deadline);
            default -> throw new IllegalArgumentException("mode=inproc|udp");
        }
    }

    /** One side's verbs resources, shared by all its connections: PD, one CQ, one MR of n slots. */
    static final class Side implements AutoCloseable {
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion mr;
        final Map<Integer, QueuePair> byQpn = new HashMap<>();
        final Map<Integer, Integer> indexOf = new HashMap<>();
        final List<CmId> ids = new ArrayList<>();
        final WorkCompletion[] wcs = WorkCompletion.array(64);
        int established;
        int verified;
        int failed;

        Side(Context ctx, int n) {
            pd = ctx.allocPd();
            cq = ctx.createCq(Math.min((1 << 15) - 1, 2 * n + 64));
            mr = pd.regMr(Arena.ofShared().allocate((long) n * SLOT), Access.LOCAL_WRITE);
        }

        /** A QP for connection {@code i} with its one receive posted into slot i. */
        QueuePair qp(CmId id, int i) {
            QueuePair qp = id.createQp(pd, new QpInitAttr(QpType.RC, cq, cq).cap(new QpCap(2, 2, 1, 1, 0)));
            qp.postRecv(new RecvWorkRequest().wrId(i).sge(mr, (long) i * SLOT, SLOT));
            byQpn.put(qp.qpn(), qp);
            indexOf.put(qp.qpn(), i);
            return qp;
        }

        void send(QueuePair qp, int i, long value) {
            mr.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, (long) i * SLOT + 8, value);
            qp.postSend(new SendWorkRequest().wrId(i).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                    .sge(mr, (long) i * SLOT + 8, 8));
        }

        long received(int i) {
            return mr.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, (long) i * SLOT);
        }

        @Override
        public void close() {
            for (CmId id : ids) {
                id.destroyQp();
            }
            mr.close();
            cq.close();
            pd.close();
            for (CmId id : ids) {
                id.close(); // the last id's release closes the CM's context: it must hold nothing by then
            }
        }
    }

    /** The server's turn: accept requests, echo every received value back on its QP. */
    static boolean serverStep(CmEventChannel ch, Side[] side, int n) {
        boolean did = false;
        CmEvent e = poll(ch);
        if (e != null) {
            did = true;
            e.ack();
            if (e.type() == CmEventType.CONNECT_REQUEST) {
                if (side[0] == null) {
                    side[0] = new Side(e.id().context(), n);
                }
                CmId id = e.id();
                int i = side[0].ids.size();
                side[0].ids.add(id);
                side[0].qp(id, i);
                id.accept(new ConnParam());
            } else if (e.type() == CmEventType.ESTABLISHED) {
                side[0].established++;
            } else if (e.type() != CmEventType.DISCONNECTED && e.type() != CmEventType.TIMEWAIT_EXIT) {
                side[0].failed++;
                System.err.println("server: " + e);
            }
        }
        if (side[0] != null) {
            Side s = side[0];
            int k = s.cq.poll(s.wcs, s.wcs.length);
            for (int j = 0; j < k; j++) {
                did = true;
                WorkCompletion wc = s.wcs[j];
                if (wc.status() != WcStatus.SUCCESS) {
                    s.failed++;
                    System.err.println("server: " + wc);
                } else if (wc.opcode() == WcOpcode.RECV) {
                    int i = (int) wc.wrId();
                    s.send(s.byQpn.get(wc.qpNum()), i, s.received(i));
                    s.verified++;
                }
            }
        }
        return did;
    }

    /** The client: resolve, route, QP, connect each of n ids; on ESTABLISHED send the index; count echoes. */
    static final class Client {
        final CmEventChannel ch = new CmEventChannel();
        final int n;
        final InetSocketAddress src;
        final InetSocketAddress dst;
        Side side;
        int started;

        Client(int n, InetSocketAddress src, InetSocketAddress dst) {
            this.n = n;
            this.src = src;
            this.dst = dst;
        }

        /** Starts resolving the next id, if any are left and fewer than {@code window} are in progress. */
        boolean startMore(int window) {
            if (started >= n || (side != null && started - side.established - side.failed >= window)) {
                return false;
            }
            CmId id = ch.createId(PortSpace.TCP);
            id.resolveAddr(src, dst, 2000);
            started++;
            if (side != null) {
                side.ids.add(id);
            } else {
                pending.add(id);
            }
            return true;
        }

        final List<CmId> pending = new ArrayList<>();

        boolean step() {
            boolean did = false;
            CmEvent e = poll(ch);
            if (e != null) {
                did = true;
                e.ack();
                CmId id = e.id();
                switch (e.type()) {
                    case ADDR_RESOLVED -> id.resolveRoute(2000);
                    case ROUTE_RESOLVED -> {
                        if (side == null) {
                            side = new Side(id.context(), n);
                            side.ids.addAll(pending);
                            pending.clear();
                        }
                        idx.put(id, nextIndex);
                        side.qp(id, nextIndex++);
                        id.connect(new ConnParam());
                    }
                    case ESTABLISHED -> {
                        side.established++;
                        int i = idx.get(id);
                        side.send(id.qp(), i, 0x5A00_0000_0000_0000L | i);
                    }
                    case DISCONNECTED, TIMEWAIT_EXIT -> {
                    }
                    default -> {
                        if (side != null) {
                            side.failed++;
                        }
                        System.err.println("client: " + e);
                    }
                }
            }
            if (side != null) {
                int k = side.cq.poll(side.wcs, side.wcs.length);
                for (int j = 0; j < k; j++) {
                    did = true;
                    WorkCompletion wc = side.wcs[j];
                    if (wc.status() != WcStatus.SUCCESS) {
                        side.failed++;
                        System.err.println("client: " + wc);
                    } else if (wc.opcode() == WcOpcode.RECV) {
                        int i = (int) wc.wrId();
                        if (side.received(i) == (0x5A00_0000_0000_0000L | i)) {
                            side.verified++;
                        } else {
                            side.failed++;
                        }
                    }
                }
            }
            return did;
        }

        final Map<CmId, Integer> idx = new HashMap<>();
        int nextIndex;
    }

    /** Removes a device once the closed ids' disconnects and time waits have let its contexts go (30 s at most). */
    static void remove(Device d) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                Verbs.removeDevice(d);
                return;
            } catch (org.rdma4j.verbs.VerbsException e) {
                if (System.nanoTime() - until > 0) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }

    /** The next event without waiting, or null. */
    static CmEvent poll(CmEventChannel ch) {
        try {
            return ch.getEvent(0, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static void idle(boolean did) {
        if (!did) {
            LockSupport.parkNanos(20_000);
        }
    }

    private static void check(long deadline, String what) {
        if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException("timed out: " + what);
        }
    }

    static long heapUsed() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime r = Runtime.getRuntime();
        return r.totalMemory() - r.freeMemory();
    }

    /** Resident set size in bytes (Linux), or -1. */
    static long rss() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith("VmRSS:")) {
                    return Long.parseLong(l.substring(6).trim().split("\\s+")[0]) * 1024;
                }
            }
        } catch (Exception e) {
            // not Linux
        }
        return -1;
    }

    static String proc() {
        String rss = "?";
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith("VmRSS:")) {
                    rss = l.substring(6).trim();
                }
            }
        } catch (Exception e) {
            // not Linux
        }
        long fds = -1;
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            fds = s.count();
        } catch (Exception e) {
            // not Linux
        }
        return "rss " + rss + ", fds " + fds + ", threads " + Thread.activeCount();
    }

    static String counters(Device d) {
        try (Context c = d.open()) {
            Map<String, Long> m = c.counters(1);
            return "gsi_overflow_drops=" + m.get("gsi_overflow_drops") + " gsi_no_port_drops="
                    + m.get("gsi_no_port_drops");
        }
    }

    private static void inproc(int n, int port, long deadline, String round) throws Exception {
        String suffix = round.isEmpty() ? "" : round.substring(" round ".length());
        Device a = SoftDevices.createLoopback("cmbenchA" + suffix);
        Device b = SoftDevices.createLoopback("cmbenchB" + suffix);
        try {
            Gid ga;
            Gid gb;
            try (Context ca = a.open(); Context cb = b.open()) {
                ga = ca.queryGid(1, 1);
                gb = cb.queryGid(1, 1);
            }
            long heap0 = heapUsed();
            long rss0 = rss();
            Side[] server = new Side[1];
            try (CmEventChannel sch = new CmEventChannel(); CmId listener = sch.createId(PortSpace.TCP)) {
                listener.bindAddr(new InetSocketAddress(gb.toInetAddress(), port));
                listener.listen(n);
                Client c = new Client(n, new InetSocketAddress(ga.toInetAddress(), 0),
                        new InetSocketAddress(gb.toInetAddress(), port));
                Thread st = Thread.ofPlatform().name("cm-server").start(() -> {
                    while ((server[0] == null || server[0].verified < n) && System.nanoTime() - deadline < 0) {
                        idle(serverStep(sch, server, n));
                    }
                });
                long t0 = System.nanoTime();
                long tEst = 0;
                while (c.side == null || c.side.verified < n) {
                    check(deadline, "client: " + (c.side == null ? 0 : c.side.established) + " established, "
                            + (c.side == null ? 0 : c.side.verified) + " verified");
                    boolean did = c.startMore(Integer.MAX_VALUE);
                    did |= c.step();
                    if (tEst == 0 && c.side != null && c.side.established == n) {
                        tEst = System.nanoTime();
                    }
                    idle(did);
                }
                long t1 = System.nanoTime();
                st.join();
                double estS = (tEst - t0) / 1e9;
                System.out.printf(Locale.ROOT, "inproc%s: %d connections established in %.3f s = %.0f/s; all verified "
                        + "by one exchange after %.3f s; failures client %d server %d%n", round, n, estS, n / estS,
                        (t1 - t0) / 1e9, c.side.failed, server[0].failed);
                long heap1 = heapUsed();
                long rss1 = rss();
                System.out.printf(Locale.ROOT, "inproc: heap %.1f MiB for %d connected RC QPs with their CM ids "
                        + "(both sides) = %.0f bytes per idle connected QP (RSS grew %.0f bytes per QP); %s%n",
                        (heap1 - heap0) / 1048576.0, 2 * n, (heap1 - heap0) / (2.0 * n), (rss1 - rss0) / (2.0 * n),
                        proc());
                System.out.println("inproc: A " + counters(a) + "; B " + counters(b));
                c.side.close();
                server[0].close();
                c.ch.close();
            }
        } finally {
            remove(a);
            remove(b);
        }
    }

    private static void udpServer(int n, int port, long deadline) throws Exception {
        InetAddress sa = InetAddress.getByName("127.0.0.1");
        InetAddress ca = InetAddress.getByName("127.0.0.2");
        int roce = SoftDevices.freeUdpPort(35891, sa, ca);
        Device d = Verbs.createDevice("soft:udp?name=cmbench-server&addr=127.0.0.1&port=" + roce);
        try {
            long heap0 = heapUsed();
            Side[] server = new Side[1];
            try (CmEventChannel sch = new CmEventChannel(); CmId listener = sch.createId(PortSpace.TCP)) {
                listener.bindAddr(new InetSocketAddress(sa, port));
                listener.listen(n);
                List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java",
                        "--enable-native-access=ALL-UNNAMED", "-Xmx" + (Runtime.getRuntime().maxMemory() >> 20) + "m"));
                System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("rdma4j."))
                        .forEach(k -> cmd.add("-D" + k + "=" + System.getProperty(k)));
                cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), CmScaleBenchmark.class.getName(),
                        "mode=udp-client", "n=" + n, "addr=127.0.0.2", "roce=" + roce, "server=127.0.0.1",
                        "port=" + port, "seconds=" + TimeUnit.NANOSECONDS.toSeconds(deadline - System.nanoTime())));
                Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
                try (BufferedReader in = child.inputReader(StandardCharsets.UTF_8);
                     var out = new java.io.PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8)) {
                    long t0 = 0;
                    while (server[0] == null || server[0].verified < n) {
                        if (t0 == 0 && server[0] != null) {
                            t0 = System.nanoTime(); // the first request came
                        }
                        check(deadline, "server: " + (server[0] == null ? 0 : server[0].established) + " established, "
                                + (server[0] == null ? 0 : server[0].verified) + " echoed");
                        if (!child.isAlive()) {
                            throw new IllegalStateException("the client JVM exited: " + child.exitValue());
                        }
                        idle(serverStep(sch, server, n));
                    }
                    long t1 = System.nanoTime();
                    // every connection is open and verified here; the client reports its side and waits
                    String line;
                    while ((line = in.readLine()) != null && !line.equals("HOLDING")) {
                        System.out.println(line);
                    }
                    long heap1 = heapUsed();
                    System.out.printf(Locale.ROOT, "udp server: %d connections open at once, every one echoed, "
                            + "%.3f s after the first request came; heap %.1f MiB = %.0f bytes per idle connected QP; "
                            + "%s; %s%n", n, (t1 - t0) / 1e9, (heap1 - heap0) / 1048576.0, (heap1 - heap0) / (double) n,
                            proc(), counters(d));
                    out.println("DONE");
                    while ((line = in.readLine()) != null) {
                        System.out.println(line);
                    }
                    child.waitFor(30, TimeUnit.SECONDS);
                } finally {
                    child.destroyForcibly();
                }
                server[0].close();
            }
        } finally {
            remove(d);
        }
    }

    private static void udpClient(int n, String addr, int roce, String serverAddr, int port, long deadline)
            throws Exception {
        Device d = Verbs.createDevice("soft:udp?name=cmbench-client&addr=" + addr + "&port=" + roce);
        try {
            long heap0 = heapUsed();
            long rss0 = rss();
            Client c = new Client(n, new InetSocketAddress(InetAddress.getByName(addr), 0),
                    new InetSocketAddress(InetAddress.getByName(serverAddr), port));
            long t0 = System.nanoTime();
            long tEst = 0;
            while (c.side == null || c.side.verified < n) {
                check(deadline, "client: " + (c.side == null ? 0 : c.side.established) + " established, "
                        + (c.side == null ? 0 : c.side.verified) + " verified");
                boolean did = c.startMore(Integer.MAX_VALUE);
                did |= c.step();
                if (tEst == 0 && c.side != null && c.side.established == n) {
                    tEst = System.nanoTime();
                }
                idle(did);
            }
            long t1 = System.nanoTime();
            long heap1 = heapUsed();
            long rss1 = rss();
            System.out.printf(Locale.ROOT, "udp client: %d connections established in %.3f s = %.0f/s, all verified "
                    + "after %.3f s, failures %d; heap %.1f MiB = %.0f bytes per idle connected QP (RSS grew %.0f "
                    + "bytes per QP); %s; %s%n", n, (tEst - t0) / 1e9, n / ((tEst - t0) / 1e9), (t1 - t0) / 1e9,
                    c.side.failed, (heap1 - heap0) / 1048576.0, (heap1 - heap0) / (double) n,
                    (rss1 - rss0) / (double) n, proc(), counters(d));
            System.out.println("HOLDING");
            System.out.flush();
            BufferedReader in = new BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
            in.readLine(); // the server measured with everything open
            c.side.close();
            c.ch.close();
        } finally {
            remove(d);
        }
    }
}
