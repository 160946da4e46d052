// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceSpec;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/**
 * {@code --loopback}: server and client in this process, each on its own embedded soft device on one
 * private in-process fabric, talking perftest's TCP exchange over 127.0.0.1 on a free port (so the
 * exchange is the one two processes would use). The client's output is printed; the server's only when
 * it fails. Stateless.
 */
final class Loopback {
    private static final AtomicInteger RUNS = new AtomicInteger();
    private static final AtomicInteger CM_PORTS = new AtomicInteger();

    private Loopback() {}

    static int run(PerfParams client, PrintWriter out, PrintWriter err) {
        Pair pair = Pair.run(client, out, err);
        if (pair.clientRc == 0 && pair.serverRc == 0) {
            return Outputs.write(client, pair.client, err);
        }
        return 1;
    }

    /** Both sides' runs and exit codes; the devices are gone when this returns. */
    static final class Pair {
        PerfRun client;
        PerfRun server;
        int clientRc;
        int serverRc;
        StringWriter serverOut = new StringWriter();
        StringWriter serverErr = new StringWriter();

        /** Runs both sides; {@code keep} keeps their resources open (tests read the buffers, then close). */
        static Pair run(PerfParams client, PrintWriter out, PrintWriter err) {
            return run(client, out, err, false);
        }

        static Pair run(PerfParams client, PrintWriter out, PrintWriter err, boolean keep) {
            Pair pair = new Pair();
            int n = RUNS.incrementAndGet();
            String fabric = "perf-loopback-" + ProcessHandle.current().pid() + "-" + n;
            Device devServer;
            Device devClient;
            try {
                devServer = Verbs.createDevice(DeviceSpec.of("soft", "loopback").with("name", "perfs" + n)
                        .with("fabric", fabric));
                devClient = Verbs.createDevice(DeviceSpec.of("soft", "loopback").with("name", "perfc" + n)
                        .with("fabric", fabric));
            } catch (VerbsException e) {
                err.println("rdma4j: cannot create the loopback devices: " + e.getMessage());
                err.flush();
                pair.clientRc = 1;
                return pair;
            }
            PerfParams server = copyAsServer(client);
            if (client.rdmaCm) {
                return runCm(pair, client, server, devServer, devClient, out, err, keep);
            }
            ServerSocket ss;
            try {
                ss = Comm.listen(InetAddress.getLoopbackAddress(), 0);
            } catch (PerfFailure f) {
                f.lines().forEach(err::println);
                err.flush();
                pair.clientRc = 1;
                Verbs.removeDevice(devServer);
                Verbs.removeDevice(devClient);
                return pair;
            }
            int timeoutMs = client.exchangeTimeoutS * 1000;
            client.server = false;
            client.host = InetAddress.getLoopbackAddress().getHostAddress();
            client.port = ss.getLocalPort();
            PrintWriter sOut = new PrintWriter(pair.serverOut);
            PrintWriter sErr = new PrintWriter(pair.serverErr);
            pair.server = new PerfRun(server, sOut, sErr);
            pair.client = new PerfRun(client, out, err);
            if (keep) {
                pair.server.keepResources();
                pair.client.keepResources();
            }
            FutureTask<Integer> serverTask = new FutureTask<>(
                    () -> pair.server.run(devServer, () -> Comm.accept(ss, timeoutMs, timeoutMs)));
            Thread st = Thread.ofPlatform().name("perf-server").daemon().start(serverTask);
            try (Progress bar = Progress.start(client, pair.client, err)) {
                pair.clientRc = pair.client.run(devClient,
                        () -> Comm.connect(client.host, client.port, timeoutMs));
            }
            finish(pair, client, st, serverTask);
            try {
                ss.close();
            } catch (java.io.IOException ignored) {
                // closed by accept already
            }
            return done(pair, sOut, sErr, err, keep, devServer, devClient);
        }

        Device[] devices;

        /**
         * -R: the server's connection manager listens on its device's address (GID index 1, the
         * address the fabric gives it) on a port that no other run uses, the client connects from its.
         */
        private static Pair runCm(Pair pair, PerfParams client, PerfParams server, Device devServer, Device devClient,
                                  PrintWriter out, PrintWriter err, boolean keep) {
            int timeoutMs = client.exchangeTimeoutS * 1000;
            CmLink listening = null;
            try {
                java.net.InetAddress ipServer;
                java.net.InetAddress ipClient;
                try (var a = devServer.open(); var b = devClient.open()) {
                    ipServer = a.queryGid(1, 1).toInetAddress();
                    ipClient = b.queryGid(1, 1).toInetAddress();
                }
                server.cmAddress = ipServer;
                client.cmAddress = ipClient;
                client.server = false;
                client.host = ipServer.getHostAddress();
                // the connection manager's port space is per process: a free port among the runs of this one
                server.port = client.port = 20_000 + (int) ((ProcessHandle.current().pid() * 7 + CM_PORTS.incrementAndGet())
                        % 20_000);
                listening = CmLink.listen(new java.net.InetSocketAddress(ipServer, server.port), timeoutMs);
            } catch (PerfFailure f) {
                f.lines().forEach(err::println);
                err.flush();
                pair.clientRc = 1;
                removeQuietly(devServer);
                removeQuietly(devClient);
                return pair;
            }
            CmLink l = listening;
            PrintWriter sOut = new PrintWriter(pair.serverOut);
            PrintWriter sErr = new PrintWriter(pair.serverErr);
            pair.server = new PerfRun(server, sOut, sErr);
            pair.client = new PerfRun(client, out, err);
            if (keep) {
                pair.server.keepResources();
                pair.client.keepResources();
            }
            FutureTask<Integer> serverTask = new FutureTask<>(() -> pair.server.run(null, () -> {
                l.accept(timeoutMs, server.qpTimeout);
                return new Comm(l, false);
            }));
            Thread st = Thread.ofPlatform().name("perf-server").daemon().start(serverTask);
            try (Progress bar = Progress.start(client, pair.client, err)) {
                pair.clientRc = pair.client.run(null, () -> new Comm(CmLink.connect(
                        new java.net.InetSocketAddress(client.cmAddress, 0),
                        new java.net.InetSocketAddress(client.host, client.port), client.qpTimeout, timeoutMs), true));
            }
            finish(pair, client, st, serverTask);
            if (!keep) {
                l.close(); // closed with the server's Comm already, unless the run never got that far
            }
            return done(pair, sOut, sErr, err, keep, devServer, devClient);
        }

        /**
         * Both runs' end: the server's output flushed, its errors shown when it failed, the devices
         * removed (or kept in the pair with {@code keep}).
         */
        private static Pair done(Pair pair, PrintWriter sOut, PrintWriter sErr, PrintWriter err, boolean keep,
                                 Device devServer, Device devClient) {
            sOut.flush();
            sErr.flush();
            if (pair.serverRc != 0 && pair.clientRc == 0 || pair.serverRc != 0 && pair.serverErr.getBuffer().length() > 0) {
                err.print("rdma4j: loopback server:\n" + pair.serverErr);
                err.flush();
            }
            if (!keep) {
                removeQuietly(devServer);
                removeQuietly(devClient);
            } else {
                pair.devices = new Device[] {devServer, devClient};
            }
            return pair;
        }

        /** Waits (bounded) for the server's task and records its exit code or why it has none. */
        private static void finish(Pair pair, PerfParams client, Thread st, FutureTask<Integer> serverTask) {
            try {
                pair.serverRc = serverTask.get(client.exchangeTimeoutS + 5L, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                st.interrupt();
                pair.serverRc = 1;
                pair.serverErr.append("rdma4j: the loopback server did not finish\n");
            } catch (ExecutionException e) {
                pair.serverRc = 1;
                pair.serverErr.append("rdma4j: the loopback server failed: ").append(String.valueOf(e.getCause()))
                        .append('\n');
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                pair.serverRc = 1;
            }
        }

        /** With keep: closes both sides' resources and removes the devices. */
        void close() {
            if (server != null && server.resources != null) {
                server.resources.close();
            }
            if (client != null && client.resources != null) {
                client.resources.close();
            }
            if (devices != null) {
                for (Device d : devices) {
                    removeQuietly(d);
                }
            }
        }
    }

    private static void removeQuietly(Device d) {
        try {
            Verbs.removeDevice(d);
        } catch (RuntimeException ignored) {
            // a device still in use is reclaimed with the process
        }
    }

    /** The server's settings for a client's: the same test and options, the server role. */
    static PerfParams copyAsServer(PerfParams c) {
        PerfParams s = new PerfParams();
        s.test = c.test;
        s.connection = c.connection;
        s.server = true;
        s.port = c.port;
        s.ibPort = c.ibPort;
        s.size = c.size;
        s.sizeGiven = c.sizeGiven;
        s.all = c.all;
        s.iters = c.iters;
        s.duration = c.duration;
        s.margin = c.margin;
        s.txDepth = c.txDepth;
        s.rxDepth = c.rxDepth;
        s.numQps = c.numQps;
        s.cqMod = c.cqMod;
        s.cqModGiven = c.cqModGiven;
        s.inlineSize = c.inlineSize;
        s.outReads = c.outReads;
        s.atomicType = c.atomicType;
        s.gidIndex = c.gidIndex;
        s.gidGiven = c.gidGiven;
        s.ipv6 = c.ipv6;
        s.mtu = c.mtu;
        s.sl = c.sl;
        s.qpTimeout = c.qpTimeout;
        s.useEvent = c.useEvent;
        s.useSrq = c.useSrq;
        s.noPeak = c.noPeak || (c.verb() == Verb.SEND && c.isBw() && !c.duplex);
        s.duplex = c.duplex;
        s.gbits = c.gbits;
        s.exchangeTimeoutS = c.exchangeTimeoutS;
        s.rdmaCm = c.rdmaCm;
        s.trafficClass = c.trafficClass;
        s.runInfinitely = c.runInfinitely;
        s.infiniteRounds = c.infiniteRounds;
        return s;
    }
}
