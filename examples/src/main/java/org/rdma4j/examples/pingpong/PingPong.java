// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.examples.pingpong;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.time.Duration;
import org.rdma4j.cm.Endpoint;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.IdleStrategy;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/**
 * What the four ping-pong programs share: their command line (rping's letters), the ping data each
 * iteration carries, the buffer description the server sends for RDMA WRITE/READ, and the checks
 * on every completion. Not part of any program's flow; read the programs first.
 */
public final class PingPong {
    /** The port the programs use unless told otherwise. */
    public static final int DEFAULT_PORT = 7471;
    /** Size of the buffer description: be64 address, be32 rkey, be32 length (as rping's). */
    public static final int INFO_SIZE = 16;
    private static final ValueLayout.OfLong BE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private PingPong() {
    }

    /**
     * What a run does.
     *
     * @param iterations round trips
     * @param size bytes per ping
     * @param source the client's local address (null: the connection manager picks)
     * @param timeout the bound of every wait (connection steps and completions)
     * @param out where the figures go, or null
     * @param probe what a measuring harness wants told when the timed loop starts and ends, or null
     */
    public record Settings(int iterations, int size, InetAddress source, Duration timeout, PrintStream out,
            Probe probe) {
        /** Checks the numbers. */
        public Settings {
            if (iterations < 1 || size < 1) {
                throw new IllegalArgumentException("iterations and size must be at least 1");
            }
            if (timeout == null) {
                timeout = Duration.ofSeconds(30);
            }
        }

        /**
         * Settings without a probe.
         *
         * @param iterations round trips
         * @param size bytes per ping
         * @param source the client's local address (null: the connection manager picks)
         * @param timeout the bound of every wait
         * @param out where the figures go, or null
         */
        public Settings(int iterations, int size, InetAddress source, Duration timeout, PrintStream out) {
            this(iterations, size, source, timeout, out, null);
        }

        /** {@return the defaults: 1000 round trips of 64 bytes} */
        public static Settings defaults() {
            return new Settings(1000, 64, null, Duration.ofSeconds(30), System.out);
        }
    }

    /** The QP every program asks for: a few sends and receives of one SGE each, CQs made by the endpoint. */
    static QpInitAttr qpAttr() {
        return new QpInitAttr().cap(new QpCap(4, 4, 1, 1, 0));
    }

    /** Fills {@code ping} with what iteration {@code iter} sends: different in every iteration. */
    public static void fill(MemorySegment ping, int iter) {
        for (long j = 0; j < ping.byteSize(); j++) {
            ping.set(ValueLayout.JAVA_BYTE, j, (byte) ('a' + (iter * 7 + j) % 26));
        }
    }

    /** Throws unless {@code got} holds what iteration {@code iter} sends (the seed's optional memcmp). */
    public static void verify(MemorySegment got, int iter, String what) {
        for (long j = 0; j < got.byteSize(); j++) {
            byte want = (byte) ('a' + (iter * 7 + j) % 26);
            if (got.get(ValueLayout.JAVA_BYTE, j) != want) {
                throw new IllegalStateException(what + " of iteration " + iter + " differs at byte " + j);
            }
        }
    }

    /** Throws unless {@code wc} is a successful completion of {@code op}. */
    static void check(WorkCompletion wc, WcOpcode op) {
        if (!wc.isSuccess()) {
            throw new VerbsException(org.rdma4j.verbs.Errno.EIO, op + " completed with " + wc.status()
                    + " (vendor error " + wc.vendorErr() + ")");
        }
        if (wc.opcode() != op) {
            throw new IllegalStateException("expected a " + op + " completion, got " + wc.opcode());
        }
    }

    /** Busy polling (the seed's first loop): ibv_poll_cq until a completion is there, bounded by {@code timeout}. */
    static WorkCompletion busyPoll(CompletionQueue cq, WorkCompletion[] slot, Duration timeout) {
        if (cq.poll(slot, 1, IdleStrategy.busySpin(), timeout.toNanos()) != 1) {
            throw new VerbsException(org.rdma4j.verbs.Errno.ETIMEDOUT, "no completion within " + timeout);
        }
        return slot[0];
    }

    /** Writes the description of {@code addr}/{@code rkey}/{@code length} into {@code info}. */
    static void putInfo(MemorySegment info, long addr, int rkey, int length) {
        info.set(BE_LONG, 0, addr);
        info.set(BE_INT, 8, rkey);
        info.set(BE_INT, 12, length);
    }

    static long infoAddr(MemorySegment info) {
        return info.get(BE_LONG, 0);
    }

    static int infoRkey(MemorySegment info) {
        return info.get(BE_INT, 8);
    }

    static int infoLength(MemorySegment info) {
        return info.get(BE_INT, 12);
    }

    static void putCount(MemorySegment buf, int count) {
        buf.set(BE_INT, 0, count);
    }

    static int count(MemorySegment buf) {
        return buf.get(BE_INT, 0);
    }

    /**
     * Told, on the thread that runs the loop, where a program's timed loop starts and ends (the seed's
     * client steps 9 and 17, its agent's 9 and 14): what {@code rdma4j study pingpong --examples} measures
     * between. The programs work the same without one.
     */
    public interface Probe {
        /**
         * The timed loop starts on this thread.
         *
         * @param role "client" or "server"
         */
        void started(String role);

        /**
         * The timed loop ended on this thread.
         *
         * @param role "client" or "server"
         * @param iterations the round trips it made
         */
        void finished(String role, int iterations);
    }

    /** Step 9: the timed loop starts; returns the time. */
    static long start(Settings s, String role) {
        if (s.probe() != null) {
            s.probe().started(role);
        }
        return System.nanoTime();
    }

    static void report(Settings s, String role, long startNs, int iterations) {
        if (s.probe() != null) {
            s.probe().finished(role, iterations);
        }
        if (s.out() != null) {
            double us = (System.nanoTime() - startNs) / 1000.0 / iterations;
            s.out().printf("%s: %d round trips of %d bytes, %.2f us each%n", role, iterations, s.size(), us);
        }
    }

    /** Says where the server listens (a script, or a test, starts the client when it reads this). */
    static void listening(Settings s, Endpoint listener) {
        if (s.out() != null) {
            s.out().println("server: listening on " + listener.localAddress());
            s.out().flush();
        }
    }

    // ------------------------------------------------------------------ the command line

    /** What a program is to do. */
    interface Program {
        /** The server: serves one client, returns the iterations it verified. */
        int server(InetSocketAddress bind, Settings s) throws Exception;

        /** The client: returns the round trips it verified. */
        int client(InetSocketAddress server, Settings s) throws Exception;
    }

    /**
     * rping's letters: {@code -s} (server) or {@code -c} (client), {@code -a ADDRESS} (the server binds
     * it, the client connects to it), {@code -I ADDRESS} (the client's source), {@code -p PORT},
     * {@code -C ITERATIONS}, {@code -S SIZE}. An address no device has gets a soft device over
     * RoCEv2/UDP on it, so two programs on one host need nothing set up:
     * {@code -s -a 127.0.0.1} and {@code -c -a 127.0.0.1 -I 127.0.0.2}.
     */
    static int main(Program p, String name, String[] args) throws Exception {
        Boolean server = null;
        String address = null;
        String source = null;
        int port = DEFAULT_PORT;
        int iterations = 1000;
        int size = 64;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "-s" -> server = true;
                    case "-c" -> server = false;
                    case "-a" -> address = args[++i];
                    case "-I" -> source = args[++i];
                    case "-p" -> port = Integer.parseInt(args[++i]);
                    case "-C" -> iterations = Integer.parseInt(args[++i]);
                    case "-S" -> size = Integer.parseInt(args[++i]);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (server == null || !server && address == null) {
                throw new IllegalArgumentException("-s or -c -a ADDRESS is required");
            }
        } catch (RuntimeException e) {
            System.err.println(name + ": " + e.getMessage());
            System.err.println("usage: " + name + " -s [-a BIND-ADDRESS] [-p PORT] [-C ITERATIONS] [-S SIZE]");
            System.err.println("       " + name + " -c -a SERVER [-I SOURCE] [-p PORT] [-C ITERATIONS] [-S SIZE]");
            return 2;
        }
        InetAddress addr = address == null ? InetAddress.getByAddress(new byte[4]) : InetAddress.getByName(address);
        InetAddress src = source == null ? null : InetAddress.getByName(source);
        ensureDevice(server ? addr : src);
        Settings s = new Settings(iterations, size, src, Duration.ofSeconds(30), System.out);
        int done = server ? p.server(new InetSocketAddress(addr, port), s) : p.client(new InetSocketAddress(addr, port), s);
        return done == iterations ? 0 : 1;
    }

    /** Makes a soft UDP device on {@code local} unless a device has it as a GID already (or it is a wildcard). */
    static void ensureDevice(InetAddress local) throws UnknownHostException {
        if (local == null || local.isAnyLocalAddress()) {
            return;
        }
        Gid want = Gid.of(local);
        for (Device d : Verbs.devices()) {
            try (Context ctx = d.open()) {
                int ports = ctx.queryDevice().physPortCnt();
                for (int port = 1; port <= ports; port++) {
                    for (int i = 0; i < ctx.queryPort(port).gidTblLen(); i++) {
                        try {
                            if (want.equals(ctx.queryGid(port, i))) {
                                return;
                            }
                        } catch (VerbsException e) {
                            // an empty entry
                        }
                    }
                }
            } catch (VerbsException e) {
                // a device that does not open does not have it
            }
        }
        String name = "pp-" + local.getHostAddress().replace(':', '-').replace('.', '-');
        Verbs.createDevice("soft:udp?name=" + name + "&addr=" + local.getHostAddress());
    }
}
