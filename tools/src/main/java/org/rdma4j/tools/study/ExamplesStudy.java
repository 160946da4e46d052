// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.rdma4j.examples.pingpong.PingPong;
import org.rdma4j.examples.pingpong.SendRecvBusyPoll;
import org.rdma4j.examples.pingpong.SendRecvWait;
import org.rdma4j.examples.pingpong.WriteReadSignaled;
import org.rdma4j.examples.pingpong.WriteUnsignaledReadSignaled;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/**
 * {@code rdma4j study pingpong --examples}: the seed's four programs as the examples module has them
 * (org.rdma4j.examples.pingpong, written on rdma4j's connection manager as the seed's are on rdma_cm),
 * run unchanged between two in-process soft devices, a server thread and a client thread, and measured
 * between the start and the end of the client's timed loop ({@link PingPong.Probe}): the round trip is
 * that interval over the iterations, the CPU shares are each thread's CPU time (and the devices' threads',
 * and the rest of the JVM's) over it. Without per-iteration times (the programs keep none), so no
 * percentiles: the main study has them.
 */
final class ExamplesStudy {
    /** How long one program run (connection and iterations) may take. */
    private static final Duration STEP = Duration.ofSeconds(60);

    /** One variant's figures. */
    record Row(Variant variant, double rttUs, CpuSnapshot.Share client, CpuSnapshot.Share server,
            CpuSnapshot.Share devices, double otherPercent) {
    }

    /** A program's two ends. */
    private interface End {
        int run(InetSocketAddress address, PingPong.Settings s) throws Exception;
    }

    private final int iters;
    private final int size;
    private final int warmup;
    private int port;

    ExamplesStudy(int iters, int size, int warmup, int firstPort) {
        this.iters = iters;
        this.size = size;
        this.warmup = warmup;
        this.port = firstPort;
    }

    private static End server(Variant v) {
        return switch (v) {
            case SEND_RECV_BUSY -> SendRecvBusyPoll::server;
            case SEND_RECV_EVENTS -> SendRecvWait::server;
            case WRITE_READ_EVENTS, UNSIGNALED_WRITE_READ_EVENTS -> WriteReadSignaled::server;
        };
    }

    private static End client(Variant v) {
        return switch (v) {
            case SEND_RECV_BUSY -> SendRecvBusyPoll::client;
            case SEND_RECV_EVENTS -> SendRecvWait::client;
            case WRITE_READ_EVENTS -> WriteReadSignaled::client;
            case UNSIGNALED_WRITE_READ_EVENTS -> WriteUnsignaledReadSignaled::client;
        };
    }

    /** Runs the variants one after the other on two new soft devices, removed again at the end. */
    List<Row> runAll(List<Variant> variants) {
        String tag = Long.toHexString(System.nanoTime() & 0xFFFFFF);
        Device a = Verbs.createDevice("soft:loopback?name=study-ex-c" + tag + "&fabric=study-ex" + tag);
        Device b = Verbs.createDevice("soft:loopback?name=study-ex-s" + tag + "&fabric=study-ex" + tag);
        try {
            InetAddress clientIp = address(a);
            InetAddress serverIp = address(b);
            List<Row> rows = new ArrayList<>();
            for (Variant v : variants) {
                if (warmup > 0) {
                    runOnce(v, serverIp, clientIp, warmup, null); // for the JIT, not measured
                }
                Measure m = new Measure();
                runOnce(v, serverIp, clientIp, iters, m);
                rows.add(m.row(v));
            }
            return rows;
        } finally {
            remove(a);
            remove(b);
        }
    }

    private static InetAddress address(Device d) {
        try (Context c = d.open()) {
            return c.queryGid(1, 1).toInetAddress();
        }
    }

    /** Removes a device once the connection manager's closed ids have let it go (bounded). */
    private static void remove(Device d) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                Verbs.removeDevice(d);
                return;
            } catch (VerbsException e) {
                if (System.nanoTime() - deadline > 0) {
                    return; // still held: it goes with the JVM
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** One run of a program: its server on a thread of its own, its client on this one's helper thread. */
    private void runOnce(Variant v, InetAddress serverIp, InetAddress clientIp, int n, Measure probe) {
        InetSocketAddress at = new InetSocketAddress(serverIp, port++);
        ByteArrayOutputStream said = new ByteArrayOutputStream();
        PrintStream serverOut = new PrintStream(said, true, StandardCharsets.UTF_8);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        int[] done = new int[2];
        Thread serverThread = Thread.ofPlatform().name("study-ex-server").start(() -> {
            try {
                done[0] = server(v).run(at, new PingPong.Settings(n, size, null, STEP, serverOut, null));
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        });
        long until = System.nanoTime() + STEP.toNanos();
        while (!said.toString(StandardCharsets.UTF_8).contains("listening on")) {
            if (!serverThread.isAlive() || System.nanoTime() - until > 0) {
                serverThread.interrupt();
                throw new StudyFailure(v.id + " (examples): the server did not listen"
                        + (failure.get() != null ? ": " + failure.get().getMessage() : ""));
            }
            Thread.onSpinWait();
        }
        if (probe != null) {
            probe.serverTid = serverThread.threadId();
        }
        Thread clientThread = Thread.ofPlatform().name("study-ex-client").start(() -> {
            try {
                done[1] = client(v).run(at, new PingPong.Settings(n, size, clientIp, STEP, null, probe));
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        });
        join(clientThread, until + STEP.toNanos());
        join(serverThread, until + 2 * STEP.toNanos());
        Throwable t = failure.get();
        if (t != null) {
            throw new StudyFailure(v.id + " (examples): " + t);
        }
        if (clientThread.isAlive() || serverThread.isAlive()) {
            clientThread.interrupt();
            serverThread.interrupt();
            throw new StudyFailure(v.id + " (examples): the program did not end within " + STEP.multipliedBy(3));
        }
        if (done[1] != n) {
            throw new StudyFailure(v.id + " (examples): the client verified " + done[1] + " of " + n + " round trips");
        }
    }

    private static void join(Thread t, long deadlineNs) {
        try {
            t.join(Duration.ofNanos(Math.max(1, deadlineNs - System.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The probe on the client: CPU snapshots of both program threads at the start and end of its timed loop. */
    private static final class Measure implements PingPong.Probe {
        volatile long serverTid;
        private long clientTid;
        private CpuSnapshot start;
        private CpuSnapshot end;
        private int iterations;

        @Override
        public void started(String role) {
            if (role.equals("client")) {
                clientTid = Thread.currentThread().threadId();
                start = CpuSnapshot.take(clientTid, serverTid);
            }
        }

        @Override
        public void finished(String role, int n) {
            if (role.equals("client")) {
                end = CpuSnapshot.take(clientTid, serverTid);
                iterations = n;
            }
        }

        Row row(Variant v) {
            if (start == null || end == null || iterations == 0) {
                throw new StudyFailure(v.id + " (examples): the program's timed loop was not seen");
            }
            CpuSnapshot.Usage u = end.usedSince(start, clientTid, serverTid);
            return new Row(v, u.wallNs() / 1000.0 / iterations, u.named()[0], u.named()[1], u.devices(),
                    u.otherPercent());
        }
    }
}
