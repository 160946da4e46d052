// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdma4j.tools.Rdma4j;
import org.rdma4j.tools.text.HostileBytes;
import picocli.CommandLine;

/**
 * A perf server against a hostile client on loopback (a plain socket that speaks perftest's exchange
 * as far as it likes): what the peer sent is printed with its control characters replaced, and the
 * exchange timeout is a deadline for the whole exchange, not for each read.
 */
@Timeout(120)
class PerfHostilePeerTest {
    private record Result(int code, String out, String err, long tookNs) {
        String all() {
            return "exit " + code + "\n--- out\n" + out + "--- err\n" + err;
        }
    }

    private static CompletableFuture<Result> server(int port, int exchangeTimeoutS) {
        String[] args = {"perf", "write_bw", "-p", Integer.toString(port), "--exchange-timeout",
            Integer.toString(exchangeTimeoutS)};
        // its own thread, so that the common pool stays free for the test's peers
        CompletableFuture<Result> result = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("perf-server").start(() -> {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CommandLine cl = Rdma4j.commandLine(args);
            cl.setOut(new PrintWriter(out, true));
            cl.setErr(new PrintWriter(err, true));
            long t0 = System.nanoTime();
            try {
                int code = cl.execute(args);
                result.complete(new Result(code, out.toString(), err.toString(), System.nanoTime() - t0));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        return result;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Connects to a perf server that may not be listening yet. */
    private static Socket connect(int port) throws Exception {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (;;) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
                s.setSoTimeout(30_000);
                return s;
            } catch (IOException e) {
                s.close();
                if (System.nanoTime() > giveUp) {
                    throw e;
                }
                Thread.sleep(20);
            }
        }
    }

    private static byte[] ascii(String s, int size) {
        byte[] b = new byte[size];
        byte[] t = s.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(t, 0, b, 0, t.length);
        return b;
    }

    @Test
    void aHostileVersionLineIsPrintedWithoutControlCharacters() throws Exception {
        int port = freePort();
        CompletableFuture<Result> server = server(port, 20);
        try (Socket s = connect(port)) {
            s.getOutputStream().write(HostileBytes.message("", Comm.VERSION_BYTES));
            Result r = server.get(60, TimeUnit.SECONDS);
            assertEquals(1, r.code(), r::all);
            assertTrue(r.err().contains("rdma4j: the peer announced version '?[2J???(???x'"), r::all);
            HostileBytes.assertNoControlCharacters(r.out() + r.err());
        }
    }

    @Test
    void aHostileKeyLineIsPrintedWithoutControlCharacters() throws Exception {
        int port = freePort();
        CompletableFuture<Result> server = server(port, 20);
        try (Socket s = connect(port)) {
            OutputStream out = s.getOutputStream();
            DataInputStream in = new DataInputStream(s.getInputStream());
            out.write(ascii(Comm.VERSION, Comm.VERSION_BYTES));
            in.readFully(new byte[Comm.VERSION_BYTES]);
            out.write(new byte[] {0, 0, 0x10, 0});
            in.readFully(new byte[4]);
            out.write(new byte[] {0, 0, 0, 64});
            in.readFully(new byte[4]);
            out.write(new byte[] {'3', 0});
            in.readFully(new byte[2]);
            // a key line (the GID form is the longer one: the server reads as much as its link needs)
            out.write(HostileBytes.message("0000:0001:", PerfDest.KEY_MSG_SIZE_GID));
            Result r = server.get(60, TimeUnit.SECONDS);
            assertEquals(1, r.code(), r::all);
            assertTrue(r.err().contains("Couldn't parse line <0000:0001:?[2J???(???x>"), r::all);
            HostileBytes.assertNoControlCharacters(r.out() + r.err());
        }
    }

    @Test
    void aTricklingClientIsCutOffAtTheExchangeDeadline() throws Exception {
        int port = freePort();
        int timeoutS = 2;
        CompletableFuture<Result> server = server(port, timeoutS);
        try (Socket s = connect(port)) {
            // a well-formed exchange, one byte every 300 ms: each read gets a byte long before the
            // timeout, the exchange as a whole takes minutes
            byte[] stream = new byte[Comm.VERSION_BYTES + 4 + 4 + 2 + PerfDest.KEY_MSG_SIZE_GID];
            System.arraycopy(ascii(Comm.VERSION, Comm.VERSION_BYTES), 0, stream, 0, Comm.VERSION_BYTES);
            // its own thread: the common pool may have a single thread on a small machine, the server's
            Thread trickle = Thread.ofPlatform().daemon().name("trickle").start(() -> {
                try {
                    for (byte b : stream) {
                        s.getOutputStream().write(b);
                        s.getOutputStream().flush();
                        Thread.sleep(300);
                    }
                } catch (IOException | InterruptedException e) {
                    // the server gave up and closed the connection, or the test ended: done
                }
            });
            Result r = server.get(100, TimeUnit.SECONDS);
            trickle.interrupt();
            assertEquals(1, r.code(), r::all);
            // a bound, not a benchmark: well under the two minutes the trickle would last
            assertTrue(r.tookNs() < TimeUnit.SECONDS.toNanos(10L * timeoutS), r.tookNs() / 1e9 + " s\n" + r.all());
            assertTrue(r.err().contains("Couldn't read version"), r::all);
            assertTrue(r.err().contains("rdma4j: the exchange with 127.0.0.1:" + s.getLocalPort()
                    + " did not finish within 2.0 s (--exchange-timeout): "), r::all);
            assertTrue(r.err().contains(" of 16 bytes of the version arrived"), r::all);
            assertTrue(!r.err().contains(": 0 of 16 bytes"), "the trickle had started\n" + r.all());
        }
    }
}
