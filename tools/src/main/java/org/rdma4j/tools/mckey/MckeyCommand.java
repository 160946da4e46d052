// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.mckey;

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
 * {@code rdma4j mckey}: librdmacm's mckey on rdma4j's connection manager: UD ids join a multicast group
 * with {@code rdma_join_multicast}; the sender (-s) sends -C datagrams to it, the receiver waits for them.
 * Options and messages are mckey's, so either side can be rdmacm-utils' mckey on a kernel device (rxe).
 *
 * <p>Which device: the one whose GID is the -b address; when none has it, a soft device over
 * RoCEv2/UDP is made on that address, as {@code --bind ADDRESS} does explicitly. Without -b the
 * {@code --bind} address is the source, else the source address of the host's route to the group.
 */
@Command(name = "mckey", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Multicast over the connection manager, like librdmacm's mckey: every node (-c) is a UD id "
                + "that joins the group (-m) with rdma_join_multicast; the sender (-s) sends -C datagrams of -S "
                + "bytes to it, a receiver waits until each of its nodes got -C of them.",
            "The device is the one whose GID is the -b address; with none, a soft device over RoCEv2/UDP is "
                + "made on that address (--bind ADDRESS chooses it explicitly). Without -b or --bind it is the "
                + "device with the source address of the host's route to the group. Start receivers first: a "
                + "receiver prints 'mckey: joined dgid: ...' once its QPs are attached.",
            "Exit code 0 when every node joined and every datagram was sent or received within --timeout, "
                + "1 on a failure, 2 on a bad flag.",
            "Examples:",
            "  rdma4j mckey -m 239.1.2.3 -b 127.0.0.1 &",
            "  rdma4j mckey -m 239.1.2.3 -b 127.0.0.2 -s"})
public final class MckeyCommand implements Callable<Integer> {
    /** RDMA_PS_UDP. */
    static final int PS_UDP = 0x0111;
    /** RDMA_PS_IPOIB. */
    static final int PS_IPOIB = 0x0002;

    @Spec
    CommandSpec spec;

    @Mixin
    DeviceOptions devices;

    @Option(names = "-m", order = 1, paramLabel = "multicast_address", description = "the group's IP address")
    String group;

    @Option(names = "-M", order = 2, paramLabel = "unmapped_multicast_address",
            description = "an AF_IB group GID (not supported: rdma4j's cm has IP addresses only)")
    String unmapped;

    @Option(names = "-s", order = 3, description = "sender")
    boolean sender;

    @Option(names = "-b", order = 4, paramLabel = "bind_address", description = "the local address to bind to")
    String bindAddress;

    @Option(names = "-c", order = 5, paramLabel = "connections", converter = CNumber.class,
            description = "how many ids (nodes) join (default 1)")
    int connections = 1;

    @Option(names = "-C", order = 6, paramLabel = "message_count", converter = CNumber.class,
            description = "datagrams to send, or to receive on each node (default 10)")
    int count = 10;

    @Option(names = "-S", order = 7, paramLabel = "message_size", converter = CNumber.class,
            description = "bytes per datagram, at most the port's active MTU (default 100)")
    int size = 100;

    @Option(names = "-p", order = 8, paramLabel = "port_space", converter = CNumber.class,
            description = "port space: 0x111 for UDP (default); 0x2 (IPoIB) is not supported")
    int portSpace = PS_UDP;

    @Option(names = "-o", order = 9, description = "join as a send-only full member (the QP is not attached)")
    boolean sendOnly;

    @Option(names = "-l", order = 10,
            description = "join without multicast loopback (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: not supported)")
    boolean noLoopback;

    @Option(names = "--pause", order = 11, paramLabel = "MS", converter = CNumber.class,
            description = "rdma4j: the pause after the joins before datagrams flow, in milliseconds (default "
                    + "3000, mckey's)")
    int pauseMs = 3000;

    @Option(names = "--timeout", order = 12, paramLabel = "SECONDS", converter = CNumber.class,
            description = "rdma4j: give up waiting for an event or for the datagrams after SECONDS (default 30; "
                    + "mckey waits for ever)")
    int timeoutSeconds = 30;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        checkOptions();
        InetAddress src = bindAddress == null ? null : lookup(bindAddress);
        InetAddress dst = lookup(group);
        if (!dst.isMulticastAddress()) {
            throw new ParameterException(spec.commandLine(), "-m " + group + " is not a multicast address");
        }
        Device made = null;
        try {
            made = CmDevices.softDeviceFor(devices, src);
            src = src != null ? src : devices.bindAddress(); // the --bind device is the natural source
            Mckey mckey = new Mckey(out, err, sender, sendOnly, count, size, pauseMs, timeoutSeconds * 1_000_000_000L);
            int ret = mckey.run(src == null ? null : new InetSocketAddress(src, 0), new InetSocketAddress(dst, 0),
                    connections);
            return ret == 0 ? 0 : 1;
        } catch (VerbsException e) {
            err.println("rdma4j: " + e.getMessage());
            return 1;
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
        if (unmapped != null) {
            throw new ParameterException(spec.commandLine(),
                    "-M " + unmapped + ": AF_IB (unmapped) addresses are not supported by rdma4j's cm; use -m");
        }
        if (group == null) {
            throw new ParameterException(spec.commandLine(), "-m multicast_address is required");
        }
        if (portSpace != PS_UDP) {
            throw new ParameterException(spec.commandLine(), "-p 0x" + Integer.toHexString(portSpace)
                    + ": only RDMA_PS_UDP (0x111) is supported" + (portSpace == PS_IPOIB ? " (IPoIB is InfiniBand's)" : ""));
        }
        if (noLoopback) {
            throw new ParameterException(spec.commandLine(),
                    "-l (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB) is not supported by rdma4j's devices");
        }
        if (connections < 1 || connections > 1024) {
            throw new ParameterException(spec.commandLine(), "-c " + connections + " is outside 1..1024");
        }
        if (count < 0 || count > 1_000_000) {
            throw new ParameterException(spec.commandLine(), "-C " + count + " is outside 0..1000000");
        }
        if (size < 0 || size > 65536) {
            throw new ParameterException(spec.commandLine(), "-S " + size + " is outside 0..65536");
        }
        if (pauseMs < 0) {
            throw new ParameterException(spec.commandLine(), "--pause must be 0 or more milliseconds");
        }
        if (timeoutSeconds < 1) {
            throw new ParameterException(spec.commandLine(), "--timeout must be at least 1 second");
        }
    }

    private InetAddress lookup(String host) {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new ParameterException(spec.commandLine(),
                    "getaddrinfo failed (" + host + ") - invalid hostname or IP address");
        }
    }
}
