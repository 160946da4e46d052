// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.device;

import java.net.InetAddress;
import java.util.Map;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceSpec;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * How a command finds the device it opens: {@code --bind ADDRESS} (with {@code --udp-port N}) creates a
 * soft RoCEv2 device on a UDP socket bound to that address, through the provider-neutral
 * {@link Verbs#createDevice(DeviceSpec)} with the spec {@link #spec(String)} (so the tools never compile
 * against a provider); without it the device is picked by name from {@link Verbs#devices()}, or is the
 * first one (soft0).
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
    public static final int ROCE_V2_PORT = 4791;
    /** The name of the device {@code --bind} creates when the command names none. */
    public static final String DEFAULT_UDP_DEVICE = "udp0";

    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    @Option(names = "--bind", order = 100, paramLabel = "ADDRESS",
            description = "create a soft RoCEv2 device on a UDP socket bound to this IPv4 or IPv6 address and "
                    + "use it (its GID index 1 is the address); -d then names the new device "
                    + "(default " + DEFAULT_UDP_DEVICE + ")")
    private InetAddress bind;

    /** The spec's {@code mode} option: the --udp-mode value, checked here so a typo is a usage error. */
    private String udpMode = "auto";

    @Option(names = "--udp-mode", order = 103, paramLabel = "MODE",
            description = "how the --bind device moves datagrams: auto (default: native when possible), native "
                    + "(libc UDP socket; over IPv6 it interoperates with rxe, over IPv4 only with rdma4j), raw "
                    + "(IPv4 sent on a raw socket with our own IP header so rxe accepts the ICRC; needs "
                    + "CAP_NET_RAW) or channel (java.nio DatagramChannel; rdma4j peers only)")
    void udpMode(String text) {
        udpMode = switch (text) {
            case "auto", "native", "raw", "channel" -> text;
            default -> throw new ParameterException(mixee.commandLine(),
                    "--udp-mode " + text + " is not one of auto, native, raw, channel");
        };
    }

    /** The spec's {@code link} option: the --link value, checked here so a typo is a usage error. */
    private String link = "udp";

    @Option(names = "--link", order = 104, paramLabel = "LINK",
            description = "how the --bind device reaches devices of other processes on this host: udp (default: "
                    + "datagrams only), auto (through a shared-memory ring when the peer's address is local and "
                    + "it has one, else UDP) or shm (shared memory only for unicast to other devices; a peer "
                    + "without a ring is unreachable)")
    void link(String text) {
        link = switch (text) {
            case "auto", "udp", "shm" -> text;
            default -> throw new ParameterException(mixee.commandLine(),
                    "--link " + text + " is not one of auto, udp, shm");
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

    /** Sets the address a soft UDP device is made on, as {@code --bind} does (for a tool that picks it). */
    public void bind(InetAddress address) {
        bind = address;
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
        return resolve(name, Map.of());
    }

    /**
     * As {@link #resolve(String)}, with {@code extraOptions} added to the {@code --bind} device's spec
     * (e.g. the fault options {@code loss}, {@code dup}, {@code reorder}, {@code corrupt}, {@code seed}).
     */
    public Device resolve(String name, Map<String, String> extraOptions) {
        if (bind != null) {
            DeviceSpec s = spec(name != null ? name : DEFAULT_UDP_DEVICE);
            for (Map.Entry<String, String> e : extraOptions.entrySet()) {
                s = s.with(e.getKey(), e.getValue());
            }
            created = Verbs.createDevice(s);
            return created;
        }
        return name == null ? Verbs.firstDevice() : Verbs.device(name);
    }

    /**
     * The spec of the {@code --bind} device called {@code name}:
     * {@code soft:udp?name=NAME&addr=ADDRESS&port=N&peer-port=M&mode=MODE&link=LINK}.
     */
    public DeviceSpec spec(String name) {
        return DeviceSpec.of("soft", "udp").with("name", name).with("addr", bind.getHostAddress())
                .with("port", Integer.toString(udpPort)).with("peer-port", Integer.toString(udpPeerPort()))
                .with("mode", udpMode).with("link", link);
    }

    /** Removes the device {@link #resolve} created for {@code --bind}, if any (its contexts must be closed). */
    public void release() {
        Device d = created;
        created = null;
        if (d != null) {
            Verbs.removeDevice(d);
        }
    }
}
