// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The floor for the soft device over UDP (a benchmark, not a test): what plain Java UDP does between
 * two processes (or two threads) on the same loopback addresses the device uses, so rdma4j's figures
 * can be read as ratios to it, measured in the same run. Three tests:
 * <ul>
 * <li>{@code latency}: a ping-pong of {@code size}-byte datagrams, both sides busy-polling a
 * non-blocking {@code DatagramChannel} ({@code poll=busy}) or blocking in it ({@code poll=block});
 * round-trip median, percentiles and mean (the mean is what {@code rdma4j pingpong}'s usec/iter is,
 * half the median what perftest's t_typical is).</li>
 * <li>{@code stream}: one side sends {@code size}-byte datagrams as fast as it can for
 * {@code seconds}, the other busy-polls them: datagrams and bytes per second received (and the loss).</li>
 * <li>{@code rate}: the stream with 8-byte datagrams: packets per second.</li>
 * </ul>
 * The measuring side is this process, bound to {@code local}; the peer ({@code peer=process}, the
 * default: a child JVM started with this class path; {@code peer=thread}: a thread of this JVM) is bound
 * to {@code remote}. The channels are connected (read/write, no per-datagram address), the cheapest
 * plain Java path. Run (after {@code ./mvnw -q -pl bench -am package -DskipTests}):
 * {@snippet lang=sh :
 * java -cp bench/target/benchmarks.jar org.rdma4j.bench.UdpFloor test=latency size=8 poll=busy
 * java -cp bench/target/benchmarks.jar org.rdma4j.bench.UdpFloor test=stream size=4124 seconds=3
 * java -cp bench/target/benchmarks.jar org.rdma4j.bench.UdpFloor test=rate seconds=3
 * }
 * Options (key=value): {@code test}, {@code size} (bytes, default 8), {@code iters} (latency round trips
 * timed, default 20000), {@code warmup} (round trips before, default 5000), {@code poll} (busy|block),
 * {@code seconds} (stream/rate, default 3), {@code peer} (process|thread), {@code local} (default
 * 127.0.0.2), {@code remote} (127.0.0.1), {@code port} (the measuring side's; the peer's is port+1,
 * default 19870), {@code stack} ({@code udp}, the default, or {@code rdma}: the latency test as RC
 * SEND/RECV between two soft devices over RoCEv2/UDP, busy-polling the CQ or, with {@code poll=block},
 * waiting on a completion channel; see {@link SoftUdpPingPong}), {@code roceport} (the devices' UDP
 * port, default 4791). Prints one {@code key=value} line per figure (a script reads them). The timed
 * loops allocate nothing.
 */
public final class UdpFloor {
    private static final int MAX_DATAGRAM = 65_507;
    /** How long either side waits for the other before it gives up (no wait is unbounded). */
    private static final long GIVE_UP_NS = 10_000_000_000L;
    /** The first byte of a datagram that ends a stream. */
    private static final byte END = (byte) 0xEE;

    private final Map<String, String> o = new TreeMap<>();

    private UdpFloor(String[] args) {
        o.putAll(Map.of("test", "latency", "size", "8", "iters", "20000", "warmup", "5000", "poll", "busy",
                "seconds", "3", "peer", "process", "local", "127.0.0.2", "remote", "127.0.0.1", "port", "19870"));
        o.put("stack", "udp");
        o.put("roceport", "4791");
        for (String a : args) {
            String[] kv = a.split("=", 2);
            if (kv.length != 2 || !o.containsKey(kv[0]) && !kv[0].equals("role")) {
                throw new IllegalArgumentException("unknown option " + a + " (options: " + o.keySet() + ")");
            }
            o.put(kv[0], kv[1]);
        }
        int size = num("size");
        if (size < 1 || size > MAX_DATAGRAM) {
            throw new IllegalArgumentException("size " + size + " is outside 1.." + MAX_DATAGRAM);
        }
        if (!java.util.Set.of("latency", "stream", "rate").contains(o.get("test"))) {
            throw new IllegalArgumentException("test=" + o.get("test") + " is not latency, stream or rate");
        }
        if (!o.get("poll").equals("busy") && !o.get("poll").equals("block")) {
            throw new IllegalArgumentException("poll=" + o.get("poll") + " is not busy or block");
        }
        if (o.get("test").equals("rate")) {
            o.put("size", "8");
        }
        if (!o.get("stack").equals("udp") && !o.get("stack").equals("rdma")) {
            throw new IllegalArgumentException("stack=" + o.get("stack") + " is not udp or rdma");
        }
        if (o.get("stack").equals("rdma") && (!o.get("test").equals("latency") || !o.get("peer").equals("process"))) {
            throw new IllegalArgumentException("stack=rdma measures test=latency with peer=process only");
        }
    }

    private int num(String key) {
        return Integer.parseInt(o.get(key));
    }

    public static void main(String[] args) throws Exception {
        UdpFloor f = new UdpFloor(args);
        if ("peer".equals(f.o.get("role"))) {
            // a child JVM ends with the process that started it, whatever it is waiting for
            ProcessHandle.current().parent().ifPresent(p -> p.onExit().thenRun(() -> System.exit(1)));
            f.peer();
        } else {
            f.measure();
        }
        System.exit(0);
    }

    private DatagramChannel open(String bind, int port, String connectTo, int connectPort) throws IOException {
        DatagramChannel c = DatagramChannel.open(StandardProtocolFamily.INET);
        c.setOption(StandardSocketOptions.SO_RCVBUF, 8 << 20);
        c.setOption(StandardSocketOptions.SO_SNDBUF, 8 << 20);
        c.bind(new InetSocketAddress(InetAddress.getByName(bind), port));
        c.connect(new InetSocketAddress(InetAddress.getByName(connectTo), connectPort));
        c.configureBlocking(o.get("poll").equals("block"));
        return c;
    }

    // ------------------------------------------------------------------ measuring side

    private void measure() throws Exception {
        if (o.get("stack").equals("rdma")) {
            measureRdma();
            return;
        }
        int port = num("port");
        DatagramChannel ch = open(o.get("local"), port, o.get("remote"), port + 1);
        Process child = null;
        Thread thread = null;
        if (o.get("peer").equals("thread")) {
            UdpFloor peer = new UdpFloor(args("peer"));
            thread = Thread.ofPlatform().daemon().name("udpfloor-peer").start(() -> {
                try {
                    peer.peer();
                } catch (Exception e) {
                    e.printStackTrace();
                }
            });
        } else {
            child = startChild();
            Process p = child;
            Thread.ofPlatform().daemon().start(() -> { // the peer's output, for its errors
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        System.err.println("peer: " + line);
                    }
                } catch (IOException e) {
                    // gone
                }
            });
        }
        try {
            System.out.printf(Locale.ROOT, "test=%s size=%d poll=%s peer=%s local=%s remote=%s%n", o.get("test"),
                    num("size"), o.get("poll"), o.get("peer"), o.get("local"), o.get("remote"));
            if (o.get("test").equals("latency")) {
                pingPong(ch);
            } else {
                receiveStream(ch);
            }
        } finally {
            ch.close();
            if (child != null) {
                if (!child.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
            }
            if (thread != null) {
                thread.join(5_000);
            }
        }
    }

    private String[] args(String role) {
        List<String> a = new ArrayList<>();
        o.forEach((k, v) -> {
            if (!k.equals("role")) {
                a.add(k + "=" + v);
            }
        });
        a.add("role=" + role);
        return a.toArray(String[]::new);
    }

    private Process startChild() throws IOException {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                UdpFloor.class.getName()));
        for (String k : System.getProperties().stringPropertyNames()) {
            if (k.startsWith("rdma4j.")) { // the device's tuning, for the peer's device too
                cmd.add(cmd.size() - 1, "-D" + k + "=" + System.getProperty(k));
            }
        }
        cmd.addAll(List.of(args("peer")));
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    /** stack=rdma: the ping-pong as RC SEND/RECV between two soft UDP devices (see SoftUdpPingPong). */
    private void measureRdma() throws Exception {
        boolean events = o.get("poll").equals("block");
        try (SoftUdpPingPong pp = new SoftUdpPingPong(o.get("local"), num("roceport"), num("size"), events)) {
            Process child = startChild();
            try {
                BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream()));
                java.io.Writer w = new java.io.OutputStreamWriter(child.getOutputStream());
                String remote = expect(r, "endpoint=");
                w.write("endpoint=" + pp.endpoint() + "\n");
                w.flush();
                pp.connect(remote);
                expect(r, "ready");
                Thread.ofPlatform().daemon().start(() -> {
                    try {
                        for (String line; (line = r.readLine()) != null; ) {
                            System.err.println("peer: " + line);
                        }
                    } catch (IOException e) {
                        // gone
                    }
                });
                System.out.printf(Locale.ROOT, "test=latency stack=rdma size=%d poll=%s peer=process local=%s remote=%s%n",
                        num("size"), o.get("poll"), o.get("local"), o.get("remote"));
                int iters = num("iters");
                int warmup = num("warmup");
                long[] rtt = new long[iters];
                long start = 0;
                for (int i = -warmup; i < iters; i++) {
                    if (i == 0) {
                        start = System.nanoTime();
                    }
                    long t0 = System.nanoTime();
                    pp.post((byte) 1);
                    pp.awaitReceive();
                    if (i >= 0) {
                        rtt[i] = System.nanoTime() - t0;
                    }
                }
                long total = System.nanoTime() - start;
                pp.post(SoftUdpPingPong.END);
                report(rtt, total, iters);
                Map<String, Long> c = new TreeMap<>(pp.counters());
                c.entrySet().removeIf(e -> !e.getKey().startsWith("udp_") && !e.getKey().contains("retr")
                        && !e.getKey().contains("timeout"));
                System.out.println("counters=" + c);
            } finally {
                if (!child.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
            }
        }
    }

    /** Reads lines until one starts with {@code prefix} (others go to stderr); returns the rest of it. */
    private static String expect(BufferedReader r, String prefix) throws IOException {
        for (String line; (line = r.readLine()) != null; ) {
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length());
            }
            System.err.println("peer: " + line);
        }
        throw new IOException("the peer ended before it said " + prefix);
    }

    /** The peer of stack=rdma: echoes every message until the end marker. */
    private void rdmaPeer() throws IOException {
        boolean events = o.get("poll").equals("block");
        try (SoftUdpPingPong pp = new SoftUdpPingPong(o.get("remote"), num("roceport"), num("size"), events)) {
            System.out.println("endpoint=" + pp.endpoint());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            String line = in.readLine();
            if (line == null || !line.startsWith("endpoint=")) {
                throw new IOException("no endpoint from the measuring side: " + line);
            }
            pp.connect(line.substring("endpoint=".length()));
            System.out.println("ready");
            System.out.flush();
            while (pp.awaitReceive() != SoftUdpPingPong.END) {
                pp.post((byte) 1);
            }
        }
    }

    private static void report(long[] rtt, long total, int iters) {
        Arrays.sort(rtt);
        System.out.printf(Locale.ROOT, "rtt_mean_us=%.2f%n", total / 1e3 / iters);
        System.out.printf(Locale.ROOT, "rtt_p50_us=%.2f%n", pct(rtt, 50) / 1e3);
        System.out.printf(Locale.ROOT, "rtt_p90_us=%.2f%n", pct(rtt, 90) / 1e3);
        System.out.printf(Locale.ROOT, "rtt_p99_us=%.2f%n", pct(rtt, 99) / 1e3);
        System.out.printf(Locale.ROOT, "rtt_p999_us=%.2f%n", pct(rtt, 99.9) / 1e3);
        System.out.printf(Locale.ROOT, "rtt_min_us=%.2f%n", rtt[0] / 1e3);
        System.out.printf(Locale.ROOT, "half_rtt_p50_us=%.2f%n", pct(rtt, 50) / 2e3);
    }

    private void pingPong(DatagramChannel ch) throws IOException {
        int size = num("size");
        int iters = num("iters");
        int warmup = num("warmup");
        boolean busy = o.get("poll").equals("busy");
        ByteBuffer out = ByteBuffer.allocateDirect(size);
        ByteBuffer in = ByteBuffer.allocateDirect(MAX_DATAGRAM);
        // Until the peer answers: a ping every 10 ms (the peer may not be bound yet).
        long giveUp = System.nanoTime() + GIVE_UP_NS;
        ch.configureBlocking(false);
        for (boolean answered = false; !answered; ) {
            if (System.nanoTime() - giveUp > 0) {
                throw new IOException("no answer from the peer at " + o.get("remote") + " in 10 s");
            }
            out.clear();
            ch.write(out);
            long until = System.nanoTime() + 10_000_000;
            while (!answered && System.nanoTime() - until < 0) {
                in.clear();
                answered = read(ch, in) > 0;
            }
        }
        // drain the answers to the other hellos
        long quiet = System.nanoTime() + 50_000_000;
        while (System.nanoTime() - quiet < 0) {
            in.clear();
            if (read(ch, in) > 0) {
                quiet = System.nanoTime() + 50_000_000;
            }
        }
        ch.configureBlocking(!busy);
        long[] rtt = new long[iters];
        long start = 0;
        for (int i = -warmup; i < iters; i++) {
            if (i == 0) {
                start = System.nanoTime();
            }
            long t0 = System.nanoTime();
            out.clear();
            out.put(0, (byte) 1);
            ch.write(out);
            in.clear();
            long spinUntil = t0 + GIVE_UP_NS;
            while (read(ch, in) <= 0) {
                if (System.nanoTime() - spinUntil > 0) {
                    throw new IOException("the peer stopped answering");
                }
            }
            if (i >= 0) {
                rtt[i] = System.nanoTime() - t0;
            }
        }
        long total = System.nanoTime() - start;
        out.clear();
        out.put(0, END);
        for (int i = 0; i < 3; i++) {
            out.clear();
            ch.write(out);
        }
        report(rtt, total, iters);
    }

    private static long pct(long[] sorted, double p) {
        int i = (int) Math.ceil(p / 100 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    /** One read; blocking or not as the channel is; 0 when nothing was there. */
    private static int read(DatagramChannel ch, ByteBuffer in) throws IOException {
        try {
            return ch.read(in);
        } catch (java.net.PortUnreachableException e) {
            return 0; // an ICMP error for a datagram sent before the peer was bound
        }
    }

    private void receiveStream(DatagramChannel ch) throws IOException {
        int size = num("size");
        ByteBuffer in = ByteBuffer.allocateDirect(MAX_DATAGRAM);
        ch.configureBlocking(false);
        // Ask the peer to start (it waits for this datagram, sent until data flows).
        ByteBuffer go = ByteBuffer.allocateDirect(1);
        long giveUp = System.nanoTime() + GIVE_UP_NS;
        long first = 0;
        long last = 0;
        long datagrams = 0;
        long bytes = 0;
        long nextGo = 0;
        for (;;) {
            long now = System.nanoTime();
            in.clear();
            int n = read(ch, in);
            if (n > 0) {
                if (in.get(0) == END && n == 1) {
                    break;
                }
                if (datagrams == 0) {
                    first = now;
                }
                datagrams++;
                bytes += n;
                last = now;
                giveUp = now + 1_000_000_000L; // the end marker may be lost: a second of silence ends it
            } else if (datagrams == 0 && now - nextGo > 0) {
                go.clear();
                ch.write(go);
                nextGo = now + 10_000_000;
            }
            if (now - giveUp > 0) {
                if (datagrams == 0) {
                    throw new IOException("no datagrams from the peer at " + o.get("remote") + " in 10 s");
                }
                break;
            }
        }
        double seconds = (last - first) / 1e9;
        System.out.printf(Locale.ROOT, "received_datagrams=%d%n", datagrams);
        System.out.printf(Locale.ROOT, "datagrams_per_s=%.0f%n", (datagrams - 1) / seconds);
        System.out.printf(Locale.ROOT, "mib_per_s=%.1f%n", bytes / seconds / (1 << 20));
        System.out.printf(Locale.ROOT, "gbit_per_s=%.3f%n", bytes * 8 / seconds / 1e9);
        System.out.printf(Locale.ROOT, "datagram_bytes=%d%n", size);
    }

    // ------------------------------------------------------------------ the peer

    private void peer() throws IOException {
        if (o.get("stack").equals("rdma")) {
            rdmaPeer();
            return;
        }
        int port = num("port");
        try (DatagramChannel ch = open(o.get("remote"), port + 1, o.get("local"), port)) {
            if (o.get("test").equals("latency")) {
                echo(ch);
            } else {
                sendStream(ch);
            }
        }
    }

    private void echo(DatagramChannel ch) throws IOException {
        ByteBuffer in = ByteBuffer.allocateDirect(MAX_DATAGRAM);
        long giveUp = System.nanoTime() + GIVE_UP_NS;
        for (;;) {
            in.clear();
            int n = read(ch, in);
            if (n > 0) {
                if (n == num("size") && in.get(0) == END) {
                    return;
                }
                in.flip();
                ch.write(in);
                giveUp = System.nanoTime() + GIVE_UP_NS;
            } else if (System.nanoTime() - giveUp > 0) {
                return; // the measuring side went away
            }
        }
    }

    private void sendStream(DatagramChannel ch) throws IOException {
        int size = num("size");
        ByteBuffer in = ByteBuffer.allocateDirect(16);
        ch.configureBlocking(true);
        ch.read(in); // the go datagram
        ByteBuffer out = ByteBuffer.allocateDirect(size);
        long end = System.nanoTime() + (long) (Double.parseDouble(o.get("seconds")) * 1e9);
        int i = 0;
        do {
            for (int k = 0; k < 64; k++) {
                out.clear();
                out.put(0, (byte) i++);
                if (out.get(0) == END) {
                    out.put(0, (byte) 0);
                }
                try {
                    ch.write(out);
                } catch (java.net.PortUnreachableException e) {
                    // a full receiver's queue is not this; ignore and go on
                }
            }
        } while (System.nanoTime() - end < 0);
        ByteBuffer stop = ByteBuffer.allocateDirect(1);
        for (int k = 0; k < 5; k++) {
            stop.clear();
            stop.put(0, END);
            ch.write(stop);
        }
    }
}
