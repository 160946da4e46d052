// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.conformance;

import static org.rdma4j.conformance.Capability.HIDDEN_OBJECT_COUNT;
import static org.rdma4j.conformance.Capability.HOP_LIMIT_AND_CLASS;
import static org.rdma4j.conformance.Capability.LOSSY_LINK;
import static org.rdma4j.conformance.Capability.MULTICAST;
import static org.rdma4j.conformance.Capability.PORT_STATE_CONTROL;
import static org.rdma4j.conformance.Capability.RELIABLE_LINK;
import static org.rdma4j.conformance.Capability.SELF_LOOPBACK;
import static org.rdma4j.conformance.Capability.SMALL_LIMITS;
import static org.rdma4j.conformance.Capability.WAITS_IN_NATIVE_CODE;

import java.net.InetAddress;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.rdma4j.conformance.Capability;
import org.rdma4j.conformance.ConformanceSetup;
import org.rdma4j.conformance.SetupProvider;
import org.rdma4j.soft.ResourceLimits;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.SoftInternals;
import org.rdma4j.soft.link.FaultyLink;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.link.shm.ShmLink;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;

/**
 * The conformance matrix of the soft provider: the setups every suite of rdma4j-conformance runs on,
 * each with what it can do. A suite that needs a capability a setup lacks is skipped there with the
 * reason (see the suites' {@code @Requires}); docs/CONFORMANCE.md shows the resulting table. Adding a
 * link is one entry here. Devices are made on first use, once per JVM (names are unique), and shared
 * by every suite of the setup.
 *
 * <p>Run one setup with {@code -Drdma4j.conformance.setups=udp6} (comma-separated names).
 */
public final class SoftSetups implements SetupProvider {
    /** Per packet on the faulty fabric: 2% lost, 2% duplicated, 2% reordered, 0.5% corrupted (dropped by the ICRC check). */
    static final FaultyLink.Faults FAULTS = new FaultyLink.Faults(0.02, 0.02, 0.02, 0.005);
    /** GID index of a UDP device's bound address (0 is a link-local placeholder). */
    static final int UDP_GID_INDEX = 1;

    @Override
    public List<ConformanceSetup> setups() {
        return List.of(
                new SoftSetup("loopback", "soft0 and soft-peer on the in-process fabric; IPv6 link-local GIDs",
                        EnumSet.of(RELIABLE_LINK, SELF_LOOPBACK, HOP_LIMIT_AND_CLASS, MULTICAST, PORT_STATE_CONTROL,
                                SMALL_LIMITS, HIDDEN_OBJECT_COUNT),
                        -1,
                        once(() -> new Device[] {Verbs.device(SoftDevices.DEFAULT_NAME),
                            SoftDevices.createLoopback("soft-peer")}),
                        once(() -> new Device[] {SoftDevices.createLoopback("soft-port"), null}),
                        once(() -> SoftDevices.createLoopback("soft-small-limits", ResourceLimits.uniform(16)))),
                new SoftSetup("udp4", "RoCEv2 over native UDP sockets (mode AUTO), 127.0.0.1 and 127.0.0.2",
                        EnumSet.of(RELIABLE_LINK, SELF_LOOPBACK, HOP_LIMIT_AND_CLASS, MULTICAST, PORT_STATE_CONTROL,
                                HIDDEN_OBJECT_COUNT, WAITS_IN_NATIVE_CODE),
                        UDP_GID_INDEX,
                        once(() -> udpPair("soft-udp", "127.0.0.1", "127.0.0.2", 24791, UdpLink.Mode.AUTO)),
                        once(() -> udpPair("soft-udp-port", "127.0.0.5", "127.0.0.6", 26791, UdpLink.Mode.AUTO)),
                        null),
                new SoftSetup("udp6", "RoCEv2 over native IPv6 UDP sockets, two devices on ::1 told apart by their"
                        + " ports. No multicast (IPv6 groups on lo need host setup), no QP-to-QP loopback (a packet"
                        + " to ::1 goes to the peer's port)",
                        EnumSet.of(RELIABLE_LINK, HOP_LIMIT_AND_CLASS, PORT_STATE_CONTROL, HIDDEN_OBJECT_COUNT,
                                WAITS_IN_NATIVE_CODE),
                        UDP_GID_INDEX,
                        once(() -> udpPair("soft-udp6", "::1", "::1", 27791, UdpLink.Mode.AUTO)),
                        once(() -> udpPair("soft-udp6-port", "::1", "::1", 28791, UdpLink.Mode.AUTO)),
                        null),
                new SoftSetup("channel", "RoCEv2 over java.nio DatagramChannels (the portable fallback), 127.0.0.3"
                        + " and 127.0.0.4. No multicast (channel mode cannot join groups); the receiver cannot read a"
                        + " packet's hop limit and traffic class",
                        EnumSet.of(RELIABLE_LINK, SELF_LOOPBACK, PORT_STATE_CONTROL, HIDDEN_OBJECT_COUNT),
                        UDP_GID_INDEX,
                        once(() -> udpPair("soft-chan", "127.0.0.3", "127.0.0.4", 25791, UdpLink.Mode.CHANNEL)),
                        once(() -> udpPair("soft-chan-port", "127.0.0.7", "127.0.0.8", 29791, UdpLink.Mode.CHANNEL)),
                        null),
                new SoftSetup("shm", "RoCEv2 packets through shared-memory rings (ShmLink, policy SHM) between two UDP"
                        + " devices on 127.0.0.9 and 127.0.0.10; multicast and QP-to-QP loopback go through UDP",
                        EnumSet.of(RELIABLE_LINK, SELF_LOOPBACK, HOP_LIMIT_AND_CLASS, MULTICAST, PORT_STATE_CONTROL,
                                HIDDEN_OBJECT_COUNT, WAITS_IN_NATIVE_CODE),
                        UDP_GID_INDEX,
                        once(() -> shmPair("soft-shm", "127.0.0.9", "127.0.0.10", 30791)),
                        once(() -> shmPair("soft-shm-port", "127.0.0.11", "127.0.0.12", 31791)),
                        null),
                new Faulty());
    }

    /** Two UDP devices on two addresses with one free port whose unicast goes through shared memory. */
    static Device[] shmPair(String name, String ipA, String ipB, int fromPort) {
        try {
            InetAddress ia = InetAddress.getByName(ipA);
            InetAddress ib = InetAddress.getByName(ipB);
            int p = SoftDevices.freeUdpPort(fromPort, ia, ib);
            return new Device[] {
                SoftDevices.createUdp(name + "-a", ia, p, p, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, null),
                SoftDevices.createUdp(name + "-b", ib, p, p, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, null)};
        } catch (Exception e) {
            throw new IllegalStateException("cannot set up the shared-memory devices " + name, e);
        }
    }

    /** Two UDP devices that talk to each other: on two addresses with one free port, or on one address with two. */
    static Device[] udpPair(String name, String ipA, String ipB, int fromPort, UdpLink.Mode mode) {
        try {
            InetAddress ia = InetAddress.getByName(ipA);
            InetAddress ib = InetAddress.getByName(ipB);
            int pa;
            int pb;
            if (ia.equals(ib)) {
                pa = SoftDevices.freeUdpPort(fromPort, ia);
                pb = SoftDevices.freeUdpPort(pa + 1, ib);
            } else {
                pa = SoftDevices.freeUdpPort(fromPort, ia, ib);
                pb = pa;
            }
            return new Device[] {SoftDevices.createUdp(name + "-a", ia, pa, pb, mode),
                    SoftDevices.createUdp(name + "-b", ib, pb, pa, mode)};
        } catch (Exception e) {
            throw new IllegalStateException("cannot set up the UDP devices " + name + " on " + ipA + " and " + ipB
                    + " (is the loopback interface up, IPv6 too?)", e);
        }
    }

    /** {@code make} called once, on first use. */
    static <T> Supplier<T> once(Supplier<T> make) {
        return new Supplier<>() {
            private T value;

            @Override
            public synchronized T get() {
                if (value == null) {
                    value = make.get();
                }
                return value;
            }
        };
    }

    /**
     * A soft setup: a pair of devices, optionally an isolated pair for the port-state suite (a null
     * peer means the main peer) and a device with small limits.
     */
    static class SoftSetup implements ConformanceSetup {
        private final String name;
        private final String description;
        private final Set<Capability> capabilities;
        private final int gidIndex;
        private final Supplier<Device[]> pair;
        private final Supplier<Device[]> isolated;
        private final Supplier<Device> smallLimits;

        SoftSetup(String name, String description, Set<Capability> capabilities, int gidIndex,
                  Supplier<Device[]> pair, Supplier<Device[]> isolated, Supplier<Device> smallLimits) {
            this.name = name;
            this.description = description;
            this.capabilities = Set.copyOf(capabilities);
            this.gidIndex = gidIndex;
            this.pair = pair;
            this.isolated = isolated;
            this.smallLimits = smallLimits;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String description() {
            return description;
        }

        @Override
        public Set<Capability> capabilities() {
            return capabilities;
        }

        @Override
        public Context open() {
            return pair.get()[0].open();
        }

        @Override
        public Context openPeer() {
            return pair.get()[1].open();
        }

        @Override
        public int gidIndex(Context c) {
            return gidIndex;
        }

        @Override
        public Context openIsolated() {
            return isolated.get()[0].open();
        }

        @Override
        public Context openIsolatedPeer() {
            Device peer = isolated.get()[1];
            return peer == null ? openPeer() : peer.open();
        }

        @Override
        public void setPortUp(Context c, boolean up) {
            SoftDevices.setPortState(c.device().name(), 1, up);
        }

        @Override
        public Context openSmallLimits() {
            return smallLimits.get().open();
        }

        @Override
        public long hiddenObjects(Context c) {
            return SoftInternals.keysAndQps(c);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /**
     * Two loopback devices behind seeded {@link FaultyLink}s that lose, duplicate, reorder and corrupt
     * packets in both directions ({@link #FAULTS}).
     */
    static final class Faulty extends SoftSetup {
        private static volatile FaultyLink linkA;
        private static volatile FaultyLink linkB;

        Faulty() {
            super("faulty", "soft-lossy-a and -b on the in-process fabric behind seeded FaultyLinks: 2% loss,"
                            + " duplication and reordering, 0.5% corruption per packet",
                    EnumSet.of(LOSSY_LINK, SELF_LOOPBACK, HOP_LIMIT_AND_CLASS, PORT_STATE_CONTROL, HIDDEN_OBJECT_COUNT),
                    -1,
                    once(() -> new Device[] {
                        SoftDevices.createLoopback("soft-lossy-a", LoopbackFabric.defaultFabric(),
                                link -> linkA = new FaultyLink(link, FAULTS, 0x5EED_A)),
                        SoftDevices.createLoopback("soft-lossy-b", LoopbackFabric.defaultFabric(),
                                link -> linkB = new FaultyLink(link, FAULTS, 0x5EED_B))}),
                    once(() -> new Device[] {
                        SoftDevices.createLoopback("soft-lossy-port-a", LoopbackFabric.defaultFabric(),
                                link -> new FaultyLink(link, FAULTS, 0x5EED_C)),
                        SoftDevices.createLoopback("soft-lossy-port-b", LoopbackFabric.defaultFabric(),
                                link -> new FaultyLink(link, FAULTS, 0x5EED_D))}),
                    null);
        }

        @Override
        public Faults faults() {
            FaultyLink a = linkA;
            FaultyLink b = linkB;
            if (a == null || b == null) {
                return Faults.NONE;
            }
            return new Faults(a.lost() + b.lost(), a.duplicated() + b.duplicated(), a.reordered() + b.reordered());
        }
    }
}
