package org.rdma4j.tools;

import java.net.InetAddress;
import java.util.List;
import java.util.function.UnaryOperator;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.UdpLink;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * How a command finds the device it opens: {@code --bind ADDRESS} (with {@code --udp-port N}) creates a
 * soft RoCEv2 device on a UDP socket bound to that address ({@link SoftDevices#createUdp}); without it
 * the device is picked by name from {@link Verbs#devices()}, or is the first one (soft0).
 *
 * <p>A picocli mixin, so every command that opens a device offers the same options: declare a field of
 * this type annotated {@code @Mixin}, then
 * {@snippet :
 * Device dev = devices.resolve(deviceName); // deviceName from the command's own -d, may be null
 * try {
 *     // open and use dev
 * } finally {
 *     devices.release();                      // removes a --bind device again
 * }
 * }
 * The device name option itself ({@code -d}) stays with each command, because the rdma-core tools
 * spell it differently.
 */
public final class DeviceOptions {
    /** The UDP port of RoCEv2. */
    public static final int ROCE_V2_PORT = UdpLink.ROCE_PORT;
    /** The name of the device {@code --bind} creates when the command names none. */
    public static final String DEFAULT_UDP_DEVICE = "udp0";

    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    @Option(names = "--bind", order = 100, paramLabel = "ADDRESS",
            description = "create a soft RoCEv2 device on a UDP socket bound to this IPv4 or IPv6 address and "
                    + "use it (its GID index 1 is the address); -d then names the new device "
                    + "(default " + DEFAULT_UDP_DEVICE + ")")
    private InetAddress bind;

    private UdpLink.Mode udpMode = UdpLink.Mode.AUTO;

    @Option(names = "--udp-mode", order = 103, paramLabel = "MODE",
            description = "how the --bind device moves datagrams: auto (default: native when possible), native "
                    + "(libc UDP socket; over IPv6 it interoperates with rxe, over IPv4 only with rdma4j), raw "
                    + "(IPv4 sent on a raw socket with our own IP header so rxe accepts the ICRC; needs "
                    + "CAP_NET_RAW) or channel (java.nio DatagramChannel; rdma4j peers only)")
    void udpMode(String text) {
        udpMode = switch (text) {
            case "auto" -> UdpLink.Mode.AUTO;
            case "native" -> UdpLink.Mode.NATIVE;
            case "raw" -> UdpLink.Mode.RAW_IPV4;
            case "channel" -> UdpLink.Mode.CHANNEL;
            default -> throw new ParameterException(mixee.commandLine(),
                    "--udp-mode " + text + " is not one of auto, native, raw, channel");
        };
    }

    private int udpPort = ROCE_V2_PORT;
    private Integer udpPeerPort;

    private Device created;

    @Option(names = "--udp-port", order = 101, paramLabel = "N",
            description = "UDP port of the --bind device (default " + ROCE_V2_PORT + ", the RoCEv2 port; "
                    + "another port only talks to rdma4j peers)")
    void udpPort(int port) {
        udpPort = checkPort("--udp-port", port);
    }

    @Option(names = "--udp-peer-port", order = 102, paramLabel = "N",
            description = "UDP port the --bind device sends to (default: the --udp-port value); for two "
                    + "rdma4j devices on one address")
    void udpPeerPort(int port) {
        udpPeerPort = checkPort("--udp-peer-port", port);
    }

    private int checkPort(String option, int port) {
        if (port < 1 || port > 65535) {
            throw new ParameterException(mixee.commandLine(), option + " " + port + " is outside 1..65535");
        }
        return port;
    }

    /** The {@code --bind} address, or null. */
    public InetAddress bindAddress() {
        return bind;
    }

    /** The {@code --udp-port} value. */
    public int udpPort() {
        return udpPort;
    }

    /** The {@code --udp-peer-port} value, by default the {@code --udp-port} value. */
    public int udpPeerPort() {
        return udpPeerPort != null ? udpPeerPort : udpPort;
    }

    /**
     * The device to open. With {@code --bind}: a new soft UDP device called {@code name} (or
     * {@link #DEFAULT_UDP_DEVICE}); {@link #release()} removes it again. Otherwise the device called
     * {@code name}, or the first device when {@code name} is null.
     *
     * @throws VerbsException ENODEV if there is no such device (or none at all); for {@code --bind},
     *     EEXIST if the name is taken, EADDRINUSE if the UDP port is, EIO if the socket cannot be set up
     */
    public Device resolve(String name) {
        return resolve(name, null);
    }

    /**
     * As {@link #resolve(String)}, with {@code linkWrapper} (may be null) around the {@code --bind}
     * device's UDP link, e.g. a {@link org.rdma4j.soft.link.FaultyLink}.
     */
    public Device resolve(String name, UnaryOperator<Link> linkWrapper) {
        if (bind != null) {
            created = SoftDevices.createUdp(name != null ? name : DEFAULT_UDP_DEVICE, bind, udpPort,
                    udpPeerPort(), udpMode, linkWrapper);
            return created;
        }
        List<Device> all = Verbs.devices();
        if (name == null) {
            if (all.isEmpty()) {
                throw new VerbsException(Errno.ENODEV, "no RDMA devices found");
            }
            return all.getFirst();
        }
        for (Device d : all) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        throw new VerbsException(Errno.ENODEV, "no RDMA device named '" + name + "'");
    }

    /** Removes the device {@link #resolve} created for {@code --bind}, if any (its contexts must be closed). */
    public void release() {
        Device d = created;
        created = null;
        if (d != null) {
            SoftDevices.remove(d);
        }
    }
}
