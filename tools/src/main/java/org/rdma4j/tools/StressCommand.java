// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import java.io.PrintWriter;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.tools.stress.Faults;
import org.rdma4j.tools.stress.StressClient;
import org.rdma4j.tools.stress.StressReport;
import org.rdma4j.tools.stress.StressServer;
import org.rdma4j.tools.stress.StressWorkload;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j stress}: the chaos run ({@link StressWorkload}) from the command line. Two soft
 * devices talk RC through seeded links that lose, reorder, duplicate and corrupt packets; every byte,
 * completion and atomic result is checked. The seed is printed first, so any run can be repeated
 * exactly; the last line is {@link StressWorkload.Result#summary()}, for scripts, and the exit code
 * is 0 only if every message was delivered once with the right bytes.
 *
 * <p>With {@code --bind} the run spans two JVMs (or hosts) over RoCEv2/UDP, each injecting faults into
 * its own outgoing packets: without a SERVER it is the server ({@link StressServer}) and waits on the
 * TCP port, with one it is the client ({@link StressClient}), which chooses the run.
 * {@snippet lang=sh :
 * rdma4j stress --bind 127.0.0.1 &                          # server
 * rdma4j stress --bind 127.0.0.2 --messages 2000 127.0.0.1  # client
 * }
 */
@Command(name = "stress", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "A chaos run: RC traffic (SEND, RDMA WRITE, READ, atomics; 0..max-size bytes over 1..4 SGEs) "
                    + "between two soft devices through links that lose, reorder, duplicate and corrupt "
                    + "packets, verifying every byte.",
            "The last line reads 'stress: messages=N delivered=N data_errors=0 duplicate_executions=0 "
                    + "retransmits=R' and the exit code is 0 only if the run was clean (1 on any error, 2 on a bad "
                    + "flag).",
            "With --bind the two ends are two JVMs over RoCEv2/UDP: 'rdma4j stress --bind ADDRESS' is the server "
                    + "and waits for a client on the TCP port; 'rdma4j stress --bind ADDRESS [run options] SERVER' "
                    + "is the client, which chooses the run (--messages, --seed, --qps, --max-size, --mtu). Each "
                    + "side injects the faults of its own flags into the packets it sends."})
public final class StressCommand implements Callable<Integer> {
    /** Exit code of a run that found an error. */
    public static final int EXIT_FAILED = StressReport.EXIT_FAILED;

    /** The TCP port of a two-JVM run's exchange (pingpong's). */
    public static final int DEFAULT_TCP_PORT = 18515;

    private static final int MAX_QPS = 64;
    private static final int MAX_SIZE_LIMIT = 1 << 20;

    @Spec
    private CommandSpec spec;

    @Option(names = "--loss", paramLabel = "P", defaultValue = "0.05",
            description = "probability that a link drops a packet (default: ${DEFAULT-VALUE})")
    private double loss;

    @Option(names = "--reorder", paramLabel = "P", defaultValue = "0.05",
            description = "probability that a link holds a packet back behind later ones (default: ${DEFAULT-VALUE})")
    private double reorder;

    @Option(names = "--dup", paramLabel = "P", defaultValue = "0.01",
            description = "probability that a link delivers a packet twice (default: ${DEFAULT-VALUE})")
    private double duplicate;

    @Option(names = "--corrupt", paramLabel = "P", defaultValue = "0.001",
            description = "probability that a link flips a bit, which the ICRC must catch (default: ${DEFAULT-VALUE})")
    private double corrupt;

    @Option(names = "--messages", paramLabel = "N", defaultValue = "10000",
            description = "messages to deliver and verify (default: ${DEFAULT-VALUE})")
    private long messages;

    @Option(names = "--seed", paramLabel = "S",
            description = "seed of the workload and the links' faults (default: from the clock; printed, so a "
                    + "run can be repeated)")
    private Long seed;

    @Option(names = "--qps", paramLabel = "N", defaultValue = "4",
            description = "RC queue pairs carrying traffic, 1.." + MAX_QPS + " (default: ${DEFAULT-VALUE})")
    private int qps;

    @Option(names = "--max-size", paramLabel = "BYTES", defaultValue = "65536",
            description = "largest message, 8.." + MAX_SIZE_LIMIT + " bytes (default: ${DEFAULT-VALUE})")
    private int maxSize;

    @Option(names = "--mtu", paramLabel = "BYTES", defaultValue = "1024",
            description = "path MTU: 256, 512, 1024, 2048 or 4096 (default: ${DEFAULT-VALUE})")
    private int mtu;

    @Mixin
    private DeviceOptions devices;

    @Option(names = {"-d", "--ib-dev"}, paramLabel = "<dev>",
            description = "a run across two JVMs on this existing device (e.g. rxe0 or a NIC) instead of a --bind "
                    + "device: no faults are injected on this side; with --bind, the name of the new device")
    private String deviceName;

    @Option(names = {"-g", "--gid-idx"}, paramLabel = "<gid index>", defaultValue = "1",
            description = "local GID index of the two-JVM run (default ${DEFAULT-VALUE}: a --bind device's address)")
    private int gidIndex;

    @Option(names = {"-p", "--port"}, paramLabel = "PORT",
            description = "with --bind: the TCP port the server listens on and the client connects to "
                    + "(default " + DEFAULT_TCP_PORT + ")")
    private Integer tcpPort;

    @Parameters(index = "0", arity = "0..1", paramLabel = "SERVER",
            description = "with --bind: the server to connect to (this side is then the client); without "
                    + "it, --bind starts a server that waits for one client")
    private String server;

    private PrintWriter out;

    @Override
    public Integer call() {
        validate();
        out = spec.commandLine().getOut();
        if (devices.bindAddress() != null || deviceName != null) {
            return remote();
        }
        long s = seed != null ? seed : System.currentTimeMillis();
        StressWorkload.Config cfg = new StressWorkload.Config(loss, reorder, duplicate, corrupt, messages, s, qps,
                maxSize, mtu);
        out.printf(Locale.ROOT,
                "rdma4j stress: loss=%s reorder=%s dup=%s corrupt=%s messages=%d seed=%d qps=%d max_size=%d mtu=%d%n",
                num(loss), num(reorder), num(duplicate), num(corrupt), messages, s, qps, maxSize, mtu);
        out.printf(Locale.ROOT, "  (to repeat this run: add --seed %d)%n", s);
        out.flush();

        long start = System.nanoTime();
        StressWorkload.Result r = StressWorkload.run(cfg, (verified, total, retransmits) -> {
            out.printf(Locale.ROOT, "  %d/%d verified (%.1f%%), %d retransmits, %.1f s%n", verified, total,
                    100.0 * verified / total, retransmits, (System.nanoTime() - start) / 1e9);
            out.flush();
        });

        double seconds = r.elapsedNanos() / 1e9;
        out.printf(Locale.ROOT, "elapsed %.2f s, %.0f messages/s%n", seconds, r.delivered() / Math.max(seconds, 1e-9));
        out.printf(Locale.ROOT, "link faults: lost=%d duplicated=%d reordered=%d corrupted=%d%n", r.lost(),
                r.duplicated(), r.reordered(), r.corrupted());
        out.println("receiving device counters (port 1):");
        for (Map.Entry<String, Long> e : StressReport.keyCounters(r.counters()).entrySet()) {
            out.printf(Locale.ROOT, "  %-24s %d%n", e.getKey(), e.getValue());
        }
        if (!r.ok()) {
            out.printf(Locale.ROOT, "first error: %s%n", r.firstError() != null ? r.firstError()
                    : "delivered " + r.delivered() + " of " + r.messages() + " messages");
            if (r.errorCompletions() > 0) {
                out.printf(Locale.ROOT, "error completions: %d%n", r.errorCompletions());
            }
            out.printf(Locale.ROOT, "  (to repeat: ./rdma4j stress %s)%n", repeatArgs(s));
        }
        out.println(r.summary());
        out.flush();
        return r.ok() ? 0 : EXIT_FAILED;
    }

    /** The two-JVM run: this side is the server, or the client of {@link #server}. */
    private int remote() {
        int port = tcpPort != null ? tcpPort : DEFAULT_TCP_PORT;
        Faults faults = new Faults(loss, duplicate, reorder, corrupt);
        if (server == null) {
            out.printf(Locale.ROOT, "rdma4j stress: loss=%s reorder=%s dup=%s corrupt=%s%n", num(loss), num(reorder),
                    num(duplicate), num(corrupt));
            return new StressServer(faults, port, MAX_QPS, MAX_SIZE_LIMIT, out, spec.commandLine().getErr())
                    .run(devices, deviceName, gidIndex);
        }
        long s = seed != null ? seed : System.currentTimeMillis();
        out.printf(Locale.ROOT,
                "rdma4j stress: loss=%s reorder=%s dup=%s corrupt=%s messages=%d seed=%d qps=%d max_size=%d mtu=%d%n",
                num(loss), num(reorder), num(duplicate), num(corrupt), messages, s, qps, maxSize, mtu);
        out.printf(Locale.ROOT, "  (to repeat this run: add --seed %d)%n", s);
        return new StressClient(faults, messages, s, qps, maxSize, mtu, server, port, out,
                spec.commandLine().getErr()).run(devices, deviceName, gidIndex);
    }

    private void validateRemote() {
        ParseResult parsed = spec.commandLine().getParseResult();
        if (devices.bindAddress() == null && deviceName != null) {
            // An existing device (native, e.g. rxe0): this side cannot inject faults.
            for (String o : List.of("--loss", "--reorder", "--dup", "--corrupt")) {
                if (parsed.hasMatchedOption(o) && parsed.matchedOptionValue(o, 0.0) != 0.0) {
                    throw bad(o + " needs --bind: only a --bind device injects faults, not -d " + deviceName);
                }
            }
            loss = reorder = duplicate = corrupt = 0;
            for (String o : List.of("--udp-port", "--udp-peer-port", "--udp-mode")) {
                if (parsed.hasMatchedOption(o)) {
                    throw bad(o + " needs --bind (-d " + deviceName + " is an existing device)");
                }
            }
        }
        if (devices.bindAddress() == null && deviceName != null && server == null) {
            for (String o : List.of("--messages", "--seed", "--qps", "--max-size", "--mtu")) {
                if (parsed.hasMatchedOption(o)) {
                    throw bad(o + " is the client's to choose: give it to the client, not the server");
                }
            }
        }
        if (gidIndex < 0 || gidIndex > 255) {
            throw bad("--gid-idx must be 0..255, not " + gidIndex);
        }
        if (devices.bindAddress() == null && deviceName != null) {
            if (tcpPort != null && (tcpPort < 1 || tcpPort > 65535)) {
                throw bad("--port " + tcpPort + " is outside 1..65535");
            }
            return;
        }
        if (devices.bindAddress() == null) {
            if (server != null) {
                throw bad("connecting to a server (" + server + ") needs --bind ADDRESS, this side's own address,"
                        + " or -d DEVICE");
            }
            for (String o : List.of("--port", "--udp-port", "--udp-peer-port", "--udp-mode")) {
                if (parsed.hasMatchedOption(o)) {
                    throw bad(o + " needs --bind (a run across two JVMs)");
                }
            }
            return;
        }
        if (server == null) {
            for (String o : List.of("--messages", "--seed", "--qps", "--max-size", "--mtu")) {
                if (parsed.hasMatchedOption(o)) {
                    throw bad(o + " is the client's to choose: give it to the client, not the server");
                }
            }
        }
        if (tcpPort != null && (tcpPort < 1 || tcpPort > 65535)) {
            throw bad("--port " + tcpPort + " is outside 1..65535");
        }
        InetAddress bind = devices.bindAddress();
        try (DatagramSocket probe = new DatagramSocket(new InetSocketAddress(bind, devices.udpPort()))) {
            probe.getLocalPort();
        } catch (SocketException e) {
            if (!String.valueOf(e.getMessage()).contains("in use")) {
                throw bad("--bind " + bind.getHostAddress() + ": not an address of this host (" + e.getMessage() + ")");
            }
        }
    }

    private void validate() {
        validateRemote();
        probability("--loss", loss);
        probability("--reorder", reorder);
        probability("--dup", duplicate);
        probability("--corrupt", corrupt);
        if (messages < 1) {
            throw bad("--messages must be at least 1, not " + messages);
        }
        if (qps < 1 || qps > MAX_QPS) {
            throw bad("--qps must be 1.." + MAX_QPS + ", not " + qps);
        }
        if (maxSize < 8 || maxSize > MAX_SIZE_LIMIT) {
            throw bad("--max-size must be 8.." + MAX_SIZE_LIMIT + " bytes, not " + maxSize);
        }
        if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096) {
            throw bad("--mtu must be one of the IB MTUs 256, 512, 1024, 2048, 4096, not " + mtu);
        }
    }

    private void probability(String flag, double p) {
        if (!(p >= 0 && p <= 1)) {
            throw bad(flag + " is a probability, 0..1, not " + p);
        }
    }

    private ParameterException bad(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    private String repeatArgs(long s) {
        return "--loss " + num(loss) + " --reorder " + num(reorder) + " --dup " + num(duplicate) + " --corrupt "
                + num(corrupt) + " --messages " + messages + " --seed " + s + " --qps " + qps + " --max-size "
                + maxSize + " --mtu " + mtu;
    }

    /** A probability as typed: 0.05, not 5.0E-2 or 0.050000. */
    private static String num(double d) {
        return java.math.BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
    }
}
