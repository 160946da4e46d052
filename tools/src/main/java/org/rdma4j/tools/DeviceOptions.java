package org.rdma4j.tools;

import java.net.InetAddress;
import java.util.List;
import org.rdma4j.soft.SoftDevices;
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
 * soft RoCEv2 device on a UDP socket bound to that address; without it the device is picked by name
 * from {@link Verbs#devices()}, or is the first one (soft0). A picocli mixin, so every command that
 * opens a device offers the same options:
 * {@snippet :
 * @Mixin DeviceOptions devices;
 * ...
 * Device dev = devices.resolve(deviceName);   // deviceName from the command's own -d, may be null
 * try { ... } finally { devices.release(); }
 * }
 * The device name option itself ({@code -d}) stays with each command, because the rdma-core tools
 * spell it differently.
 */
public final class DeviceOptions {
    /** The UDP port of RoCEv2. */
    public static final int ROCE_V2_PORT = 4791;
    /** The name of the device {@code --bind} creates when the command names none. */
    public static final String DEFAULT_UDP_DEVICE = "udp0";
    /** What {@code --bind} reports while the soft UDP link is not part of the build. */
    public static final String UDP_NOT_BUILT = "--bind needs the UDP link (not built yet)";

    @Spec(Spec.Target.MIXEE)
    private CommandSpec mixee;

    @Option(names = "--bind", paramLabel = "ADDRESS",
            description = "create a soft RoCEv2 device on a UDP socket bound to this IPv4 or IPv6 address and "
                    + "use it (its GID index 1 is the address); -d then names the new device "
                    + "(default " + DEFAULT_UDP_DEVICE + ")")
    private InetAddress bind;

    private int udpPort = ROCE_V2_PORT;

    private Device created;

    @Option(names = "--udp-port", paramLabel = "N",
            description = "UDP port of the --bind device (default " + ROCE_V2_PORT + ", the RoCEv2 port; "
                    + "another port only talks to rdma4j peers)")
    void udpPort(int port) {
        if (port < 1 || port > 65535) {
            throw new ParameterException(mixee.commandLine(), "--udp-port " + port + " is outside 1..65535");
        }
        udpPort = port;
    }

    /** The {@code --bind} address, or null. */
    public InetAddress bindAddress() {
        return bind;
    }

    /** The {@code --udp-port} value. */
    public int udpPort() {
        return udpPort;
    }

    /**
     * The device to open. With {@code --bind}: a new soft UDP device called {@code name} (or
     * {@link #DEFAULT_UDP_DEVICE}); {@link #release()} removes it again. Otherwise the device called
     * {@code name}, or the first device when {@code name} is null.
     *
     * @throws VerbsException ENODEV if there is no such device (or none at all), EEXIST if the name for a
     *     new device is taken, ENOSYS while the UDP link is not built
     */
    public Device resolve(String name) {
        if (bind != null) {
            created = createUdp(name != null ? name : DEFAULT_UDP_DEVICE, bind, udpPort);
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

    private static Device createUdp(String name, InetAddress address, int port) {
        // The one line to change once the soft UDP link exists:
        //     return SoftDevices.createUdp(name, address, port);
        throw new VerbsException(Errno.ENOSYS, UDP_NOT_BUILT);
    }
}
