package org.rdma4j.soft.conformance;

import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.link.FaultyLink;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;

/**
 * How the conformance suites reach the soft device: the device under test is {@code soft0}; the peer
 * is a second soft device on the same in-process fabric. For the fault suite, two more devices sit
 * behind seeded {@link FaultyLink}s. Devices are created once per JVM (names are unique), so every
 * suite shares them.
 */
final class SoftFixture {
    /** Per packet: 2% lost, 2% duplicated, 2% reordered, 0.5% corrupted (dropped by the ICRC check). */
    static final FaultyLink.Faults FAULTS = new FaultyLink.Faults(0.02, 0.02, 0.02, 0.005);
    private static Device peer;
    private static Device lossyA;
    private static Device lossyB;
    /** The links of the two lossy devices, so a suite can check faults really happened. */
    static volatile FaultyLink linkA;
    static volatile FaultyLink linkB;

    private SoftFixture() {}

    static Context open() {
        return Verbs.open(SoftDevices.DEFAULT_NAME);
    }

    static synchronized Context openPeer() {
        if (peer == null) {
            peer = SoftDevices.createLoopback("soft-peer");
        }
        return peer.open();
    }

    static synchronized Context openLossy() {
        if (lossyA == null) {
            lossyA = SoftDevices.createLoopback("soft-lossy-a", LoopbackFabric.defaultFabric(),
                    link -> linkA = new FaultyLink(link, FAULTS, 0x5EED_A));
        }
        return lossyA.open();
    }

    static synchronized Context openLossyPeer() {
        if (lossyB == null) {
            lossyB = SoftDevices.createLoopback("soft-lossy-b", LoopbackFabric.defaultFabric(),
                    link -> linkB = new FaultyLink(link, FAULTS, 0x5EED_B));
        }
        return lossyB.open();
    }
}
