// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.tools.cli.GetoptLike;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j pingpong rc|uc|ud|srq}: rdma-core's {@code ibv_rc_pingpong}, {@code ibv_uc_pingpong},
 * {@code ibv_ud_pingpong} and {@code ibv_srq_pingpong} in Java, interoperable with them: the same options
 * and defaults, the same TCP exchange of {@code LID:QPN:PSN:GID} messages, the same QP attributes and the
 * same output. Without a host it is the server and waits on the TCP port; with one it connects there.
 * {@snippet lang=sh :
 * rdma4j pingpong rc --bind 192.0.2.1 -g 1             # server, RoCEv2 over UDP from 192.0.2.1
 * rdma4j pingpong rc --bind 192.0.2.2 -g 1 192.0.2.1   # client (or: ibv_rc_pingpong -g <idx> 192.0.2.1)
 * }
 */
@Command(name = "pingpong", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1,
        description = {"Ping-pong SENDs between two queue pairs, compatible with rdma-core's ibv_rc_pingpong, "
                + "ibv_uc_pingpong, ibv_ud_pingpong and ibv_srq_pingpong (either side may be the C tool).",
            "Run it without a host to start a server that waits for a connection, with a host to connect to "
                    + "that server. On RoCE (soft devices included) pass -g <gid index> on both sides.",
            "Like the C tools, a run whose peer is killed while this side waits to receive waits for ever; "
                    + "scripts pass --stall-timeout <seconds>: when no completion arrives for that long the tool "
                    + "says which exchange it waited for and from which peer, and exits 1. The TCP exchange gives "
                    + "up after --exchange-timeout (default 60 s) once connected."},
        subcommands = {PingpongCommand.Rc.class, PingpongCommand.Uc.class, PingpongCommand.Ud.class,
            PingpongCommand.Srq.class})
public final class PingpongCommand implements Runnable {
    /** The C tools' TCP port. */
    public static final int DEFAULT_PORT = 18515;
    /** How long the TCP exchange may take once connected (the C tools wait forever). */
    public static final int DEFAULT_EXCHANGE_TIMEOUT_S = 60;

    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(),
                "Missing transport: say which one, rc, uc, ud or srq (e.g. 'rdma4j pingpong rc -g 1').");
    }

    /** The options every one of the four tools has. */
    abstract static class TransportCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DeviceOptions devices;

        @Option(names = {"-p", "--port"}, order = 1, paramLabel = "<port>", converter = CNumber.class,
                description = "listen on/connect to port <port> (default " + DEFAULT_PORT + ")")
        int port = DEFAULT_PORT;

        @Option(names = {"-d", "--ib-dev"}, order = 2, paramLabel = "<dev>",
                description = "use IB device <dev> (default first device found)")
        String ibDev;

        @Option(names = {"-i", "--ib-port"}, order = 3, paramLabel = "<port>", converter = CNumber.class,
                description = "use port <port> of IB device (default 1)")
        int ibPort = 1;

        @Option(names = {"-s", "--size"}, order = 4, paramLabel = "<size>", converter = CNumber.class,
                description = "size of message to exchange (default 4096; ud: 1024)")
        Integer size;

        @Option(names = {"-r", "--rx-depth"}, order = 7, paramLabel = "<dep>", converter = CNumber.class,
                description = "number of receives to post at a time (default 500)")
        int rxDepth = 500;

        @Option(names = {"-n", "--iters"}, order = 8, paramLabel = "<iters>", converter = CNumber.class,
                description = "number of exchanges (default 1000)")
        int iters = 1000;

        @Option(names = {"-l", "--sl"}, order = 9, paramLabel = "<sl>", converter = CNumber.class,
                description = "service level value (default 0)")
        int sl;

        @Option(names = {"-e", "--events"}, order = 10, description = "sleep on CQ events (default poll)")
        boolean events;

        @Option(names = {"-g", "--gid-idx"}, order = 11, paramLabel = "<gid index>", converter = CNumber.class,
                description = "local port gid index (needed on RoCE: without it there is no GRH)")
        int gidIndex = -1;

        @Option(names = {"-c", "--chk"}, order = 12, description = "validate received buffer")
        boolean validate;

        @Option(names = "--warmup", order = 51, paramLabel = "<iters>", converter = CNumber.class,
                description = "rdma4j: leave the first <iters> of the -n exchanges out of the timing, so the"
                        + " JIT has compiled the loop (default 0: time them all, as the C tools)")
        int warmup;

        @Option(names = "--exchange-timeout", order = 50, paramLabel = "<seconds>", converter = CNumber.class,
                description = "rdma4j: give up the TCP address exchange after this long once connected "
                        + "(default " + DEFAULT_EXCHANGE_TIMEOUT_S + "; the C tools wait forever)")
        int exchangeTimeout = DEFAULT_EXCHANGE_TIMEOUT_S;

        @Option(names = "--stall-timeout", order = 52, paramLabel = "<seconds>", converter = CNumber.class,
                description = "rdma4j: give up when no completion arrives for this long (the peer was killed or"
                        + " stopped): say which exchange was awaited from which peer and exit 1 (default 0: wait"
                        + " for ever, as the C tools)")
        int stallTimeout;

        @Parameters(index = "0", arity = "0..1", paramLabel = "<host>",
                description = "the server to connect to; without it, start a server and wait for connection")
        String host;

        abstract Transport transport();

        /** The -m value, for the tools that have -m. */
        Mtu mtu() {
            return Mtu.MTU_1024;
        }

        /** The -q value, for srq. */
        int numQp() {
            return 1;
        }

        ParameterException usage(String message) {
            return new ParameterException(spec.commandLine(), message);
        }

        @Override
        public Integer call() {
            CommandLine cl = spec.commandLine();
            PrintWriter err = cl.getErr();
            if (port < 0 || port > 65535) {
                throw usage("-p " + port + ": the port must be 0..65535");
            }
            if (ibPort < 1) {
                throw usage("-i " + ibPort + ": the IB port must be 1 or more");
            }
            int msgSize = size != null ? size : transport().defaultSize();
            if (msgSize < (transport() == Transport.SRQ ? 1 : 0)) {
                throw usage("-s " + msgSize + ": the size must be " + (transport() == Transport.SRQ ? 1 : 0)
                        + " or more");
            }
            if (transport() == Transport.UD && msgSize > Integer.MAX_VALUE - Pingpong.GRH_BYTES) {
                throw usage("-s " + msgSize + " is too large");
            }
            if (rxDepth < 0) {
                throw usage("-r " + rxDepth + ": the receive depth must be 0 or more");
            }
            if (iters < 0) {
                throw usage("-n " + iters + ": the number of exchanges must be 0 or more");
            }
            if (warmup < 0 || warmup >= Math.max(1, iters)) {
                throw usage("--warmup " + warmup + " must be 0 or more and less than -n " + iters);
            }
            if (exchangeTimeout < 1 || exchangeTimeout > Integer.MAX_VALUE / 1000) {
                throw usage("--exchange-timeout " + exchangeTimeout + " must be a positive number of seconds");
            }
            if (stallTimeout < 0 || stallTimeout > Integer.MAX_VALUE / 1000) {
                throw usage("--stall-timeout " + stallTimeout + " must be 0 (wait for ever) or a number of seconds");
            }
            int qpCount = numQp();
            if (transport() == Transport.SRQ) {
                if (qpCount > rxDepth) {
                    err.printf("rx_depth %d is too small for %d QPs -- must have at least one receive per QP.\n",
                            rxDepth, qpCount);
                    err.flush();
                    return 1;
                }
                if (qpCount >= Pingpong.MAX_QP) {
                    err.printf("num_qp %d must be less than %d\n", qpCount, Pingpong.MAX_QP - 1);
                    err.flush();
                    return 1;
                }
                if (qpCount < 1) {
                    throw usage("-q " + qpCount + ": the number of QPs must be 1 or more");
                }
            }
            Settings settings = new Settings(transport(), host, port, ibPort, msgSize, mtu(), rxDepth, iters, sl,
                    events, gidIndex, validate, qpCount, exchangeTimeout * 1000, warmup, stallTimeout * 1000L);

            Device device;
            try {
                device = devices.resolve(ibDev);
            } catch (VerbsException e) {
                if (devices.bindAddress() != null) {
                    err.println("rdma4j: " + e.getMessage());
                } else if (ibDev == null) {
                    err.println("No IB devices found");
                } else {
                    err.println("IB device " + ibDev + " not found");
                }
                err.flush();
                return 1;
            }
            try {
                return new Pingpong(settings, cl.getOut(), err).run(device);
            } finally {
                devices.release();
            }
        }
    }

    /** The tools with a path MTU option. */
    abstract static class ConnectedCommand extends TransportCommand {
        private Mtu mtu = Mtu.MTU_1024;

        @Option(names = {"-m", "--mtu"}, order = 5, paramLabel = "<size>", converter = CNumber.class,
                description = "path MTU (default 1024)")
        void mtu(int bytes) {
            Mtu m = Mtu.ofBytes(bytes);
            if (m == null) {
                throw usage("-m " + bytes + ": the path MTU must be 256, 512, 1024, 2048 or 4096");
            }
            mtu = m;
        }

        @Override
        Mtu mtu() {
            return mtu;
        }
    }

    @Command(name = "rc", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ibv_rc_pingpong: SENDs over a reliable connected (RC) queue pair.",
                "Default -s 4096. QP: max_dest_rd_atomic 1, min_rnr_timer 12, timeout 14, retry_cnt 7, "
                        + "rnr_retry 7, GRH hop limit 1."})
    public static final class Rc extends ConnectedCommand {
        @Override
        Transport transport() {
            return Transport.RC;
        }
    }

    @Command(name = "uc", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ibv_uc_pingpong: SENDs over an unreliable connected (UC) queue pair.",
                "Default -s 4096. A lost message stalls the run, as with the C tool."})
    public static final class Uc extends ConnectedCommand {
        @Override
        Transport transport() {
            return Transport.UC;
        }
    }

    @Command(name = "ud", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ibv_ud_pingpong: SENDs over an unreliable datagram (UD) queue pair, Q_Key 0x11111111.",
                "Default -s 1024; -s may not exceed the port's active MTU. Every receive buffer starts with "
                        + "the 40-byte GRH area. No -m: UD messages are single packets."})
    public static final class Ud extends TransportCommand {
        @Override
        Transport transport() {
            return Transport.UD;
        }
    }

    @Command(name = "srq", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ibv_srq_pingpong: SENDs over several RC queue pairs that share one receive queue.",
                "Default -s 4096, -q 16; -n counts the exchanges of all QPs together. The TCP exchange carries "
                        + Pingpong.MAX_QP + " addresses each way, as the C tool's does."})
    public static final class Srq extends ConnectedCommand {
        @Option(names = {"-q", "--num-qp"}, order = 6, paramLabel = "<num>", converter = CNumber.class,
                description = "number of QPs to use (default 16)")
        int numQp = 16;

        @Override
        Transport transport() {
            return Transport.SRQ;
        }

        @Override
        int numQp() {
            return numQp;
        }
    }
}
