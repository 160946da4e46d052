// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.tools.cli.GetoptLike;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.Device;
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
 * {@code rdma4j perf write_lat|write_bw|read_lat|read_bw|send_lat|send_bw|atomic_lat|atomic_bw}:
 * perftest's {@code ib_*} programs in Java, interoperable with them (same options and defaults, same
 * TCP exchange, same QP attributes, same banner and tables). Roles:
 * <ul>
 * <li>with a host: the client, which connects to a server there (perftest's {@code ib_write_bw HOST});</li>
 * <li>with {@code --server}, or any of {@code -p}, {@code -d}, {@code --bind} and no host: the server,
 *     waiting for a client (perftest's {@code ib_write_bw} alone);</li>
 * <li>otherwise, or with {@code --loopback}: both sides in this process on two embedded soft devices,
 *     printing the client's results (one command gives numbers on a laptop).</li>
 * </ul>
 * {@snippet lang=sh :
 * rdma4j perf write_lat                                     # loopback, in-process
 * rdma4j perf write_bw --bind 10.0.0.1                      # server on a soft RoCEv2/UDP device
 * rdma4j perf write_bw --bind 10.0.0.2 10.0.0.1             # its client (or: ib_write_bw 10.0.0.1)
 * }
 */
@Command(name = "perf", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1,
        description = {"perftest's ib_*_lat/ib_*_bw tests, compatible with them (either side may be the C tool).",
            "Without a host and without --server/-p/-d/--bind both sides run in this process on the embedded "
                    + "soft device (--loopback); with a host it is the client; otherwise the server."})
public final class PerfCommand implements Runnable {
    /**
     * The tests, in perftest's order. Added by {@link org.rdma4j.tools.Rdma4j#commandLine(String...)}
     * rather than by the annotation, so that a run builds only the test it names (about 45 options
     * each: building all eight is most of the tool's start-up, which is seconds in an emulated VM).
     */
    public static final java.util.List<Class<?>> TESTS = java.util.List.of(WriteLat.class, WriteBw.class,
            ReadLat.class, ReadBw.class, SendLat.class, SendBw.class, AtomicLat.class, AtomicBw.class);

    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing test: say which one, e.g. 'rdma4j perf write_lat' "
                + "(write_lat, write_bw, read_lat, read_bw, send_lat, send_bw, atomic_lat, atomic_bw).");
    }

    /** The options every test has; each test refuses the ones perftest refuses for it ({@link PerftestParser}). */
    abstract static class TestCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DeviceOptions devices;

        @Option(names = {"-a", "--all"}, order = 1, description = "Run sizes from 2 till 2^23")
        boolean all;

        @Option(names = {"-A", "--atomic_type"}, order = 2, paramLabel = "<type>",
                description = "type of atomic operation from {CMP_AND_SWAP,FETCH_AND_ADD} (default FETCH_AND_ADD)")
        String atomicType;

        @Option(names = {"-b", "--bidirectional"}, order = 3,
                description = "Measure bidirectional bandwidth (default unidirectional)")
        boolean bidirectional;

        @Option(names = {"-c", "--connection"}, order = 4, paramLabel = "<RC/UC/UD>",
                description = "Connection type RC/UC/UD (default RC; UC not for READ/ATOMIC, UD only for SEND)")
        String connection;

        @Option(names = {"-d", "--ib-dev"}, order = 5, paramLabel = "<dev>",
                description = "Use IB device <dev> (default first device found)")
        String ibDev;

        @Option(names = {"-D", "--duration"}, order = 6, paramLabel = "<sec>", converter = CNumber.class,
                description = "Run test for a customized period of seconds.")
        Integer duration;

        @Option(names = {"-e", "--events"}, order = 7, description = "Sleep on CQ events (default poll)")
        boolean events;

        @Option(names = {"-f", "--margin"}, order = 8, paramLabel = "<sec>", converter = CNumber.class,
                description = "measure results within margins. (default=duration/4)")
        Integer margin;

        @Option(names = {"-F", "--CPU-freq"}, order = 9,
                description = "Accepted for perftest compatibility (rdma4j's clock is System.nanoTime)")
        boolean cpuFreq;

        @Option(names = {"-H", "--report-histogram"}, order = 10,
                description = "Print out all results (default print summary only)")
        boolean histogram;

        @Option(names = {"-i", "--ib-port"}, order = 11, paramLabel = "<port>", converter = CNumber.class,
                description = "Use port <port> of IB device (default 1)")
        int ibPort = 1;

        @Option(names = {"-I", "--inline_size"}, order = 12, paramLabel = "<size>", converter = CNumber.class,
                description = "Max size of message to be sent in inline")
        Integer inline;

        @Option(names = {"-l", "--post_list"}, order = 12, paramLabel = "<list size>", converter = CNumber.class,
                description = "Post list of send WQEs of <list size> size (instead of single post); BW tests")
        Integer postList;

        @Option(names = {"-m", "--mtu"}, order = 13, paramLabel = "<mtu>", converter = CNumber.class,
                description = "MTU size : 256 - 4096 (default port mtu)")
        Integer mtu;

        @Option(names = {"-n", "--iters"}, order = 14, paramLabel = "<iters>", converter = CNumber.class,
                description = "Number of exchanges (at least 5, default 1000; write_bw 5000)")
        Integer iters;

        @Option(names = {"-N", "--noPeak"}, order = 15,
                description = "Cancel peak-bw calculation (default with peak up to iters=20000)")
        boolean noPeak;

        @Option(names = {"-o", "--outs"}, order = 16, paramLabel = "<num>", converter = CNumber.class,
                description = "num of outstanding read/atom(default max of device)")
        Integer outs;

        @Option(names = {"-p", "--port"}, order = 17, paramLabel = "<port>", converter = CNumber.class,
                description = "Listen on/connect to port <port> (default " + PerfParams.DEF_PORT + ")")
        Integer port;

        @Option(names = {"-q", "--qp"}, order = 18, paramLabel = "<num of qp's>", converter = CNumber.class,
                description = "Num of qp's(default 1)")
        Integer qps;

        @Option(names = {"-Q", "--cq-mod"}, order = 19, paramLabel = "<n>", converter = CNumber.class,
                description = "Generate Cqe only after <--cq-mod> completion")
        Integer cqMod;

        @Option(names = {"-r", "--rx-depth"}, order = 20, paramLabel = "<dep>", converter = CNumber.class,
                description = "Rx queue size (default 512). If using srq, rx-depth controls max-wr size of the srq")
        Integer rxDepth;

        @Option(names = {"-R", "--rdma_cm"}, order = 21,
                description = "Connect QPs with rdma_cm and run test on those QPs (RC; the exchange goes over an "
                        + "rdma_cm QP too; the device is the one of the address: --bind, or the source of the host's route to the server)")
        boolean rdmaCm;

        @Option(names = {"-s", "--size"}, order = 22, paramLabel = "<size>",
                description = "Size of message to exchange (default 65536 for BW, 2 for latency; K and M suffixes)")
        String size;

        @Option(names = {"-S", "--sl"}, order = 23, paramLabel = "<sl>", converter = CNumber.class,
                description = "SL (default 0)")
        int sl;

        @Option(names = {"-t", "--tx-depth"}, order = 24, paramLabel = "<dep>", converter = CNumber.class,
                description = "Size of tx queue (default 128 for BW, 1 for latency)")
        Integer txDepth;

        @Option(names = {"-u", "--qp-timeout"}, order = 25, paramLabel = "<timeout>", converter = CNumber.class,
                description = "QP timeout, timeout value is 4 usec * 2 ^(timeout), default 14")
        int qpTimeout = PerfParams.DEF_QP_TIME;

        @Option(names = {"-U", "--report-unsorted"}, order = 26,
                description = "(implies -H) print out unsorted results (default sorted)")
        boolean unsorted;

        @Option(names = {"-x", "--gid-index"}, order = 27, paramLabel = "<index>", converter = CNumber.class,
                description = "Test uses GID with GID index (Default : IB - no gid . ETH - 0, the best GID as "
                        + "perftest picks it; with --bind 1, the bound address)")
        Integer gidIndex;

        @Option(names = "--use-srq", order = 28, description = "Use a Shared Receive Queue (SEND tests)")
        boolean useSrq;

        @Option(names = "--report_gbits", order = 29,
                description = "Report Max/Average BW of test in Gbit/sec (instead of MiB/sec)")
        boolean gbits;

        @Option(names = "--ipv6", order = 30, description = "Use IPv6 GID. Default is IPv4")
        boolean ipv6;

        @Option(names = "--out_json", order = 31, description = "Save the report in a json file")
        boolean outJson;

        @Option(names = "--out_json_file", order = 32, paramLabel = "<file>",
                description = "Name of the report json file (default perftest_out.json)")
        Path outJsonFile;

        @Option(names = "--json", order = 40, paramLabel = "FILE",
                description = "rdma4j: write the results as JSON (perftest's --out_json field names) to FILE")
        Path json;

        @Option(names = "--plot", order = 41, paramLabel = "FILE.png",
                description = "rdma4j: plot to a PNG: latency percentile curve (lat tests; -a: latency against size), "
                        + "bandwidth and message rate against size (-a; one size: labelled bars)")
        Path plot;

        @Option(names = "--loopback", order = 42,
                description = "rdma4j: run server and client in this process on two embedded soft devices "
                        + "(the default without a host, --server, -p, -d and --bind)")
        boolean loopback;

        @Option(names = "--server", order = 43, description = "rdma4j: be the server (wait for a client)")
        boolean server;

        @Option(names = "--exchange-timeout", order = 44, paramLabel = "<seconds>", converter = CNumber.class,
                description = "rdma4j: give up waiting for the peer (a client to connect, a message, a "
                        + "completion) after this long without progress (default 120; perftest waits forever)")
        int exchangeTimeout = 120;

        @Option(names = "--counters", order = 45,
                description = "rdma4j: at the end, print the port's non-zero counters (retransmissions, "
                        + "timeouts, duplicates, drops) on stderr, as `rdma statistic` would show them")
        boolean counters;

        @Mixin
        PerftestOptions more;

        @Parameters(index = "0", arity = "0..1", paramLabel = "<host>",
                description = "the server to connect to; without it see the roles above")
        String host;

        abstract PerfTest test();

        ParameterException usage(String message) {
            return new ParameterException(spec.commandLine(), message);
        }

        /** perftest's parser and force_dependecies for this test: the settings, or a usage error. */
        PerfParams params() {
            return PerftestParser.params(this);
        }

        /** Whether this run is the in-process loopback (no host and no server role). */
        boolean isLoopback() {
            return loopback || (host == null && !server && port == null && ibDev == null
                    && devices.bindAddress() == null);
        }


        @Override
        public Integer call() {
            PerfParams p = params();
            CommandLine cl = spec.commandLine();
            PrintWriter out = cl.getOut();
            PrintWriter err = cl.getErr();
            if (isLoopback()) {
                return Loopback.run(p, out, err);
            }
            Device device = null;
            try {
                if (!p.rdmaCm || ibDev != null || devices.bindAddress() != null) {
                    // with -R and neither -d nor --bind the connection manager picks the device by address
                    device = devices.resolve(ibDev);
                }
            } catch (VerbsException e) {
                if (devices.bindAddress() != null) {
                    err.println("rdma4j: " + e.getMessage());
                } else if (ibDev == null) {
                    err.println(" Did not detect devices ");
                    err.println(" If device exists, check if driver is up");
                    err.println(" Unable to find the Infiniband/RoCE device");
                } else {
                    err.println(" IB device " + ibDev + " not found");
                    err.println(" Unable to find the Infiniband/RoCE device");
                }
                err.flush();
                return 1;
            }
            try {
                PerfRun run = new PerfRun(p, out, err);
                int timeoutMs = p.exchangeTimeoutS * 1000;
                PerfRun.CommOpener opener;
                CmLink listening = null;
                if (p.rdmaCm && p.server) {
                    // listening before "Waiting for client to connect" is printed: a client may start then
                    CmLink l = CmLink.listen(new InetSocketAddress(PerfRun.cmListenAddress(p), p.port), timeoutMs);
                    listening = l;
                    opener = () -> {
                        l.accept(timeoutMs, p.qpTimeout);
                        return new Comm(l, false);
                    };
                } else if (p.rdmaCm) {
                    InetSocketAddress src = p.cmAddress == null ? null : new InetSocketAddress(p.cmAddress, 0);
                    opener = () -> new Comm(CmLink.connect(src, new InetSocketAddress(PerfRun.cmHost(p), p.port),
                            p.qpTimeout, timeoutMs), true);
                } else {
                    opener = p.server
                            ? () -> Comm.accept(Comm.listen(p.sourceIp, p.port), timeoutMs, timeoutMs)
                            : () -> Comm.connect(p.sourceIp, p.host, p.port, timeoutMs);
                }
                int rc;
                try (Progress bar = Progress.start(p, run, err)) {
                    rc = run.run(device, opener);
                }
                if (listening != null) {
                    listening.close(); // closed with the run's Comm already, unless no client came
                }
                if (rc == 0) {
                    rc = Outputs.write(p, run, err);
                }
                return rc;
            } catch (PerfFailure f) {
                f.lines().forEach(err::println);
                err.flush();
                return 1;
            } finally {
                try {
                    devices.release();
                } catch (VerbsException e) {
                    if (!p.rdmaCm || e.errno() != org.rdma4j.verbs.Errno.EBUSY) {
                        throw e;
                    }
                    // -R: the connection manager keeps the device's context until the ids' time wait
                    // ends (seconds after the disconnect); the device goes with the process
                }
            }
        }
    }

    /** ib_write_lat. */
    @Command(name = "write_lat", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ib_write_lat: RDMA WRITE ping-pong, half the round trip per sample.",
                "Defaults: -s 2, -n 1000, -t 1, inline up to 220 bytes on a device perftest knows (none on",
                "rxe, siw or the soft device)."})
    public static final class WriteLat extends TestCommand {
        @Override
        PerfTest test() {
            return PerfTest.WRITE_LAT;
        }
    }

    /** ib_write_bw. */
    @Command(name = "write_bw", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ib_write_bw: RDMA WRITE bandwidth from the client to the server.",
                "Defaults: -s 65536, -n 5000, -t 128, -Q 100 (1 above 8 KiB)."})
    public static final class WriteBw extends TestCommand {
        @Override
        PerfTest test() {
            return PerfTest.WRITE_BW;
        }
    }

    /** ib_read_lat. */
    @Command(name = "read_lat", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ib_read_lat: RDMA READ round trips from the client.", "Defaults: -s 2, -n 1000."})
    public static final class ReadLat extends TestCommand {
        @Override
        PerfTest test() {
            return PerfTest.READ_LAT;
        }
    }

    /** ib_read_bw. */
    @Command(name = "read_bw", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ib_read_bw: RDMA READ bandwidth (the client reads the server's buffer).",
                "Defaults: -s 65536, -n 1000, -t 128, -o the device's maximum."})
    public static final class ReadBw extends TestCommand {
        @Override
        PerfTest test() {
            return PerfTest.READ_BW;
        }
    }

    /** ib_send_lat. */
    @Command(name = "send_lat", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ib_send_lat: SEND ping-pong, half the round trip per sample.",
                "Defaults: -s 2, -n 1000, -r 512, inline up to 236 bytes (188 on UD) on a device perftest knows",
                "(none on rxe, siw or the soft device)."})
    public static final class SendLat extends TestCommand {
        @Override
        PerfTest test() {
            return PerfTest.SEND_LAT;
        }
    }

    /** ib_send_bw. */
    @Command(name = "send_bw", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ib_send_bw: SEND bandwidth from the client to the server; each side prints its own.",
                "Defaults: -s 65536, -n 1000, -t 128, -r 512."})
    public static final class SendBw extends TestCommand {
        @Override
        PerfTest test() {
            return PerfTest.SEND_BW;
        }
    }

    /** ib_atomic_lat. */
    @Command(name = "atomic_lat", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ib_atomic_lat: 8-byte atomic round trips from the client (-A picks the operation).",
                "Defaults: -A FETCH_AND_ADD, -n 1000."})
    public static final class AtomicLat extends TestCommand {
        @Override
        PerfTest test() {
            return PerfTest.ATOMIC_LAT;
        }
    }

    /** ib_atomic_bw. */
    @Command(name = "atomic_bw", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 1, sortOptions = false,
            modelTransformer = GetoptLike.class,
            description = {"ib_atomic_bw: 8-byte atomics from the client, as many in flight as -t allows.",
                "Defaults: -A FETCH_AND_ADD, -n 1000, -t 128."})
    public static final class AtomicBw extends TestCommand {
        @Override
        PerfTest test() {
            return PerfTest.ATOMIC_BW;
        }
    }

    static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }
}
