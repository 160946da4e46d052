// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.rping;

import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.Callable;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.tools.device.CmDevices;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j rping}: librdmacm's rping on rdma4j's connection manager. The client connects with the
 * CM (RDMA_PS_TCP, port 7174 by default), and per ping SENDs the descriptor of its source buffer; the
 * server RDMA READs it, SENDs a go-ahead; the client SENDs the descriptor of its sink buffer; the server
 * RDMA WRITEs the data there and SENDs a go-ahead; the client compares (-V) and prints (-v). Options,
 * messages and the 16-byte descriptor {be64 addr, be32 rkey, be32 size} are rping's, so either side can
 * be librdmacm's rping on a kernel device (rxe).
 *
 * <p>Which device: the one whose GID is the address (-a on the server, -I on the client, else the
 * {@code --bind} device's, else the source address of the host's route to -a, as rdma_resolve_addr
 * picks it), or the iWARP device whose net device has it (librdmacm decides: an iWARP GID is a MAC
 * address); when none has the -a or -I address, a soft device over RoCEv2/UDP is made on it, as
 * {@code --bind ADDRESS} does explicitly.
 */
@Command(name = "rping", sortOptions = false, // -V is rping's validate: no --version, -h and --help below
        description = {"RDMA ping-pong over a connection-manager connection, like librdmacm's rping: the client "
                + "SENDs its buffer's address, the server RDMA READs it and RDMA WRITEs it back into the "
                + "client's sink buffer, and the client checks it.",
            "The device is the one whose GID is the address given (-a for the server, -I for the client); with "
                + "none, a soft device over RoCEv2/UDP is made on that address (--bind ADDRESS chooses it "
                + "explicitly). A client with neither -I nor --bind uses the device that has the source address "
                + "of the host's route to -a, as rdma_cm does (ENODEV when no device has it).",
            "Exit code 0 after -C pings (or when the peer disconnects), 1 on a failure, 2 on a bad flag.",
            "Examples:",
            "  rdma4j rping -s -a 127.0.0.1 -C 10 &",
            "  rdma4j rping -c -a 127.0.0.1 -I 127.0.0.2 -C 10 -v -V"})
public final class RpingCommand implements Callable<Integer> {
    /** rping's default port. */
    public static final int DEFAULT_PORT = 7174;
    /** rping's largest buffer (64 KiB); -S must be below it. */
    static final int BUFSIZE = 64 * 1024;
    /** rping's smallest -S: room for "rdma-ping-%d: " with INT_MAX and its terminator. */
    static final int MIN_SIZE = "2147483647".length() + 1 + "rdma-ping-%d: ".length() + 1;

    @Spec
    CommandSpec spec;

    @Mixin
    DeviceOptions devices;

    @Option(names = {"-h", "--help"}, usageHelp = true, order = 0, description = "Show this help message and exit.")
    boolean help;

    @Option(names = "-s", order = 1, description = "server side. To bind to any address with IPv6 use -a ::0")
    boolean server;

    @Option(names = "-c", order = 2, description = "client side")
    boolean client;

    @Option(names = "-a", order = 3, paramLabel = "addr", description = "address")
    String address;

    @Option(names = "-I", order = 4, paramLabel = "addr", description = "Source address to bind to for client.")
    String source;

    @Option(names = "-p", order = 5, paramLabel = "port", converter = CNumber.class, description = "port")
    int port = DEFAULT_PORT;

    @Option(names = "-S", order = 6, paramLabel = "size", converter = CNumber.class, description = "ping data size")
    int size = 64;

    @Option(names = "-C", order = 7, paramLabel = "count", converter = CNumber.class,
            description = "ping count times (default 0: until interrupted)")
    int count;

    @Option(names = "-v", order = 8, description = "display ping data to stdout")
    boolean[] verbose = new boolean[0];

    @Option(names = "-V", order = 9, description = "validate ping data")
    boolean validate;

    @Option(names = "-d", order = 10, description = "debug printfs")
    boolean debug;

    @Option(names = "-P", order = 11, description = "persistent server mode allowing multiple connections")
    boolean persistent;

    @Option(names = "-q", order = 12, description = "use self-created, self-modified QP")
    boolean selfCreateQp;

    @Option(names = "--timeout", order = 13, paramLabel = "SECONDS", converter = CNumber.class,
            description = "rdma4j: give up a step (address and route resolution, connecting, each exchange of "
                    + "a ping, the disconnect) after SECONDS without progress (default 10)")
    int timeoutSeconds = 10;

    @Option(names = "--accept-timeout", order = 14, paramLabel = "SECONDS", converter = CNumber.class,
            description = "rdma4j: the server gives up when no client connects within SECONDS (default 0: it "
                    + "waits until interrupted, as rping does)")
    int acceptSeconds;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        checkOptions();
        InetAddress addr = address == null ? null : lookup("-a", address);
        InetAddress src = source == null ? null : lookup("-I", source);
        if (server && addr == null) {
            addr = InetAddress.getByName("0.0.0.0"); // rping's server binds to any IPv4 address by default
        }
        Device made = null;
        try {
            made = CmDevices.softDeviceFor(devices, server ? addr : src);
            Rping rping = new Rping(out, err, size, count, verbose.length > 0, validate, debug,
                    timeoutSeconds * 1_000_000_000L, selfCreateQp);
            if (server) {
                return rping.runServer(new InetSocketAddress(addr, port), persistent, acceptSeconds * 1_000_000_000L);
            }
            InetAddress from = src != null ? src : devices.bindAddress(); // the --bind device is the source
            return rping.runClient(from == null ? null : new InetSocketAddress(from, 0),
                    new InetSocketAddress(addr, port));
        } finally {
            if (made != null) {
                try {
                    devices.release();
                } catch (VerbsException e) {
                    err.println("rdma4j: could not remove the soft device " + made.name() + ": " + e.getMessage());
                }
            }
            out.flush();
            err.flush();
        }
    }

    private void checkOptions() {
        if (server == client) {
            throw new ParameterException(spec.commandLine(), "give exactly one of -s (server) and -c (client)");
        }
        if (client && address == null) {
            throw new ParameterException(spec.commandLine(), "the client needs -a addr (the server's address)");
        }
        if (server && source != null) {
            throw new ParameterException(spec.commandLine(), "-I is the client's source address");
        }
        if (client && persistent) {
            throw new ParameterException(spec.commandLine(), "-P is for the server");
        }
        if (port < 0 || port > 65535) {
            throw new ParameterException(spec.commandLine(), "-p " + port + " is outside 0..65535");
        }
        if (size < MIN_SIZE || size > BUFSIZE - 1) {
            throw new ParameterException(spec.commandLine(),
                    "Invalid size " + size + " (valid range is " + MIN_SIZE + " to " + BUFSIZE + ")");
        }
        if (count < 0) {
            throw new ParameterException(spec.commandLine(), "Invalid count " + count);
        }
        if (timeoutSeconds < 1) {
            throw new ParameterException(spec.commandLine(), "--timeout must be at least 1 second");
        }
        if (acceptSeconds < 0) {
            throw new ParameterException(spec.commandLine(), "--accept-timeout must be 0 or more seconds");
        }
    }

    private InetAddress lookup(String option, String host) {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new ParameterException(spec.commandLine(),
                    option + " " + host + ": getaddrinfo failed - invalid hostname or IP address");
        }
    }
}
