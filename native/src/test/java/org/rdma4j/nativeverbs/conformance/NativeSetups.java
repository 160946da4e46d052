// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs.conformance;

import static org.rdma4j.conformance.Capability.WAITS_IN_NATIVE_CODE;
import static org.rdma4j.conformance.Capability.MULTICAST;
import static org.rdma4j.conformance.Capability.PORT_STATE_CONTROL;
import static org.rdma4j.conformance.Capability.RELIABLE_LINK;
import static org.rdma4j.conformance.Capability.SELF_LOOPBACK;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.rdma4j.conformance.Capability;
import org.rdma4j.conformance.ConformanceSetup;
import org.rdma4j.conformance.QpConnector;
import org.rdma4j.conformance.cm.CmQpConnector;
import org.rdma4j.conformance.SetupProvider;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.VerbsProvider;

/**
 * The conformance setup of the native provider: a real kernel device (in CI the rxe0 of the interop VM,
 * interop/jobs/native-conformance.sh), both ends of every connection on that one device (QP-to-QP
 * loopback, as rxe and NICs do it). Configured by system properties, because the device only exists
 * where the job made it:
 *
 * <ul>
 *   <li>{@value #DEVICE}: the device (default: the native provider's first);
 *   <li>{@value #GID}: its GID index for connections (default -1: the suite takes the first RoCE v2 entry);
 *   <li>{@value #ISOLATED}, {@value #ISOLATED_GID}, {@value #ISOLATED_NETDEV}: a second device that only
 *       the port-state suite uses, its GID index and the net device under it; with all three the setup
 *       has {@link Capability#PORT_STATE_CONTROL}, and a port goes down by {@code ip link set dev NETDEV
 *       down} (root needed);
 *   <li>{@value #MULTICAST_PROP}{@code =true}: the device receives multicast its own QPs send to groups
 *       they attached to. Off by default: rxe before Linux 6.3 attaches a QP to a group without joining
 *       the IP group, so nothing arrives (interop/README.md, "The mcast job").
 *   <li>{@value #CM_ADDRESS}{@code =IP}: RC pairs are connected through librdmacm ({@link CmQpConnector}),
 *       both ends on this address of the device, instead of by modify_qp: an iWARP device (siw) needs it.
 * </ul>
 *
 * <p>Offers no setup when the native provider is missing or unavailable, or the device does not exist;
 * it then says why on standard error (the VM job turns that line into its FAIL reason). The host's
 * {@code ./mvnw verify} does not run the suites in this module at all (its surefire does not scan
 * rdma4j-conformance); the VM job does.
 */
public final class NativeSetups implements SetupProvider {
    public static final String DEVICE = "rdma4j.native.conformance.device";
    public static final String GID = "rdma4j.native.conformance.gid";
    public static final String ISOLATED = "rdma4j.native.conformance.isolated";
    public static final String ISOLATED_GID = "rdma4j.native.conformance.isolated.gid";
    public static final String ISOLATED_NETDEV = "rdma4j.native.conformance.isolated.netdev";
    public static final String MULTICAST_PROP = "rdma4j.native.conformance.multicast";
    public static final String CM_ADDRESS = "rdma4j.native.conformance.cm.address";
    /** Printed first on the line that says why there is no native setup. */
    public static final String UNAVAILABLE = "native provider unavailable: ";

    @Override
    public List<ConformanceSetup> setups() {
        String why = unavailable();
        if (why != null) {
            System.err.println(UNAVAILABLE + why);
            return List.of();
        }
        Device main = device(System.getProperty(DEVICE, ""));
        if (main == null) {
            return List.of();
        }
        EnumSet<Capability> caps = EnumSet.of(RELIABLE_LINK, SELF_LOOPBACK, WAITS_IN_NATIVE_CODE);
        if (Boolean.getBoolean(MULTICAST_PROP)) {
            caps.add(MULTICAST);
        }
        String isoName = System.getProperty(ISOLATED, "");
        String netdev = System.getProperty(ISOLATED_NETDEV, "");
        Device iso = null;
        if (!isoName.isEmpty() && !netdev.isEmpty()) {
            iso = device(isoName);
            if (iso == null) {
                return List.of();
            }
            caps.add(PORT_STATE_CONTROL);
        }
        String cm = System.getProperty(CM_ADDRESS, "");
        QpConnector connector = null;
        if (!cm.isEmpty()) {
            try {
                InetAddress at = InetAddress.getByName(cm);
                connector = new CmQpConnector(at, at);
            } catch (UnknownHostException e) {
                System.err.println(UNAVAILABLE + CM_ADDRESS + "=" + cm + " is not an address: " + e.getMessage());
                return List.of();
            }
        }
        return List.of(new NativeSetup(main, Integer.getInteger(GID, -1), iso, Integer.getInteger(ISOLATED_GID, -1),
                netdev, caps, connector));
    }

    /** Why the native provider cannot run here, or null. */
    private static String unavailable() {
        VerbsProvider p;
        try {
            p = Verbs.provider("native");
        } catch (VerbsException e) {
            return e.getMessage();
        }
        Throwable cause = p.unavailabilityCause();
        return cause == null ? null : String.valueOf(cause.getMessage());
    }

    /** The native device called {@code name} (the provider's first if empty), or null after saying why. */
    private static Device device(String name) {
        try {
            List<Device> all = Verbs.provider("native").devices();
            if (name.isEmpty()) {
                if (all.isEmpty()) {
                    System.err.println(UNAVAILABLE + "it lists no devices (is a NIC or rxe configured? see `rdma link`)");
                    return null;
                }
                return all.getFirst();
            }
            for (Device d : all) {
                if (d.name().equals(name)) {
                    return d;
                }
            }
            System.err.println(UNAVAILABLE + "no device " + name + " among " + all.stream().map(Device::name).toList());
        } catch (VerbsException e) {
            System.err.println(UNAVAILABLE + e.getMessage());
        }
        return null;
    }

    /** The setup: one device, both ends on it; optionally a second device for the port-state suite. */
    static final class NativeSetup implements ConformanceSetup {
        private final Device device;
        private final int gidIndex;
        private final Device isolated;
        private final int isolatedGid;
        private final String isolatedNetdev;
        private final Set<Capability> capabilities;
        private final QpConnector connector;

        NativeSetup(Device device, int gidIndex, Device isolated, int isolatedGid, String isolatedNetdev,
                    Set<Capability> capabilities, QpConnector connector) {
            this.connector = connector;
            this.device = device;
            this.gidIndex = gidIndex;
            this.isolated = isolated;
            this.isolatedGid = isolatedGid;
            this.isolatedNetdev = isolatedNetdev;
            this.capabilities = Set.copyOf(capabilities);
        }

        @Override
        public String knownDeviation(String suite, String method, String displayName) {
            // found on rxe and on siw; a NIC has its own (run the suites on it to find them)
            if (device.name().startsWith("siw")) {
                return SiwDeviations.why(suite, method, displayName);
            }
            return device.name().startsWith("rxe") ? RxeDeviations.why(suite, method, displayName) : null;
        }

        @Override
        public String modifyQpConnectUnsupported() {
            return device.transportName().startsWith("iWARP")
                    ? device.name() + " is an iWARP device: an RC QP reaches RTS only through the connection manager"
                            + " (rdma_connect/rdma_accept; iw_cm hands the QP its TCP stream), not by modify_qp"
                    : null;
        }

        @Override
        public String qpStateUnreported() {
            return device.name().startsWith("siw") ? "Linux 6.1 siw's query_qp reports no QP state (qp_state 0,"
                    + " RESET, whatever the state)" : null;
        }

        @Override
        public QpConnector qpConnector() {
            return connector;
        }

        @Override
        public String name() {
            return "native";
        }

        @Override
        public String description() {
            return "libibverbs on " + device.name() + (gidIndex >= 0 ? " GID " + gidIndex : "")
                    + ", both ends on the device (QP-to-QP loopback)"
                    + (isolated != null ? "; port-state suite on " + isolated.name() + " over " + isolatedNetdev : "")
                    + (connector != null ? "; RC pairs connected by " + connector : "");
        }

        @Override
        public Set<Capability> capabilities() {
            return capabilities;
        }

        @Override
        public Context open() {
            return device.open();
        }

        /**
         * As uverbs modify_qp decides (S-QP-10): CAP_NET_RAW (bit 13) in this process's effective set, read
         * from /proc/self/status. The system's privileged-qkey mode is taken to be off, its default.
         */
        @Override
        public boolean controlledQkeyAllowed() {
            try {
                for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
                    if (line.startsWith("CapEff:")) {
                        return (Long.parseUnsignedLong(line.substring(7).trim(), 16) & (1L << 13)) != 0;
                    }
                }
            } catch (IOException | NumberFormatException e) {
                throw new IllegalStateException("cannot read this process's capabilities: " + e, e);
            }
            throw new IllegalStateException("/proc/self/status has no CapEff line");
        }

        @Override
        public int gidIndex(Context c) {
            return isolated != null && c.device().name().equals(isolated.name()) ? isolatedGid : gidIndex;
        }

        @Override
        public Context openIsolated() {
            if (isolated == null) {
                return ConformanceSetup.super.openIsolated();
            }
            return isolated.open();
        }

        /** Both ends on the isolated device too: rxe connects a QP only to a peer reachable through its own net device. */
        @Override
        public Context openIsolatedPeer() {
            return openIsolated();
        }

        @Override
        public void setPortUp(Context c, boolean up) {
            if (isolated == null || !c.device().name().equals(isolated.name())) {
                throw new UnsupportedOperationException(name() + " takes only " + (isolated == null ? "no port"
                        : isolated.name() + "'s port") + " down, not " + c.device().name() + "'s");
            }
            ip("link", "set", "dev", isolatedNetdev, up ? "up" : "down");
        }

        private static void ip(String... args) {
            String[] cmd = new String[args.length + 1];
            cmd[0] = "ip";
            System.arraycopy(args, 0, cmd, 1, args.length);
            try {
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IllegalStateException(String.join(" ", cmd) + " did not finish in 10 s");
                }
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
                if (p.exitValue() != 0) {
                    throw new IllegalStateException(String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out);
                }
            } catch (IOException e) {
                throw new IllegalStateException(String.join(" ", cmd) + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(String.join(" ", cmd) + " interrupted", e);
            }
        }

        @Override
        public String toString() {
            return name();
        }
    }
}
