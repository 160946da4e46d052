// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.tools.Rdma4j;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine;

/** One in-process run of {@code rdma4j ...}: exit code and everything it printed. */
record PingpongRun(int exitCode, String out, String err) {
    /** The second in-process device the clients use (soft0 and it share the default fabric). */
    static final String PEER = "pp-peer";
    private static final long RUN_TIMEOUT_S = 120;

    static PingpongRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Rdma4j.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new PingpongRun(code, out.toString(), err.toString());
    }

    static synchronized void ensurePeer() {
        try {
            SoftDevices.createLoopback(PEER);
        } catch (VerbsException e) {
            if (e.errno() != Errno.EEXIST) {
                throw e;
            }
        }
    }

    /** A TCP port nobody listens on right now. */
    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<String> args(String... a) {
        return new ArrayList<>(List.of(a));
    }

    /** Server and client of one run. */
    record Pair(PingpongRun server, PingpongRun client) {
        @Override
        public String toString() {
            return "=== server\n" + server + "\n=== client\n" + client;
        }
    }

    /**
     * Runs {@code rdma4j pingpong <serverArgs>} on one thread and {@code rdma4j pingpong <clientArgs>} on
     * another; the client is retried while the server is not listening yet.
     */
    static Pair pair(List<String> serverArgs, List<String> clientArgs) {
        ExecutorService pool = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "pingpong-test");
            t.setDaemon(true);
            return t;
        });
        try {
            List<String> s = new ArrayList<>(List.of("pingpong"));
            s.addAll(serverArgs);
            List<String> c = new ArrayList<>(List.of("pingpong"));
            c.addAll(clientArgs);
            Future<PingpongRun> server = pool.submit(() -> of(s.toArray(String[]::new)));
            Future<PingpongRun> client = pool.submit(() -> {
                long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                for (;;) {
                    PingpongRun r = of(c.toArray(String[]::new));
                    boolean notListening = r.exitCode() != 0 && r.err().contains("Couldn't connect to");
                    if (!notListening || server.isDone() || System.nanoTime() > giveUp) {
                        return r;
                    }
                    Thread.sleep(20);
                }
            });
            PingpongRun cr = get(client, "client", server);
            PingpongRun sr = get(server, "server", client);
            return new Pair(sr, cr);
        } finally {
            pool.shutdownNow();
        }
    }

    static PingpongRun get(Future<PingpongRun> f, String who, Future<PingpongRun> other) {
        try {
            return f.get(RUN_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            other.cancel(true);
            return fail("the " + who + " did not finish within " + RUN_TIMEOUT_S + " s");
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "exit " + exitCode + "\n--- out\n" + out + "--- err\n" + err;
    }
}
