// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import java.util.Set;
import org.rdma4j.verbs.Context;

/**
 * One way of running the conformance suites: a provider and a link between two devices (soft on its
 * in-process fabric, soft over UDP sockets, soft behind a faulty link, later the native provider on
 * rxe). Every suite runs once per setup that a {@link SetupProvider} of the test class path offers;
 * a test that needs a {@link Capability} the setup lacks is skipped with the reason.
 *
 * <p>Contexts are fresh opens: the suite closes them after each test. Devices behind them may be
 * shared by every suite of the setup (tests never assume an empty device).
 */
public interface ConformanceSetup {
    /** Short, stable name shown in test reports (e.g. {@code loopback}, {@code udp4}). */
    String name();

    /** One line saying what the devices and the link are. */
    String description();

    /** What this setup can do beyond plain verbs. */
    Set<Capability> capabilities();

    default boolean has(Capability c) {
        return capabilities().contains(c);
    }

    /** A fresh open of the device under test. */
    Context open();

    /** A fresh open of the device at the other end of connections; by default the same device again. */
    default Context openPeer() {
        return open();
    }

    /**
     * The GID index connections use on {@code c}, or -1 to let the suite take the first non-empty
     * RoCE v2 entry of port 1.
     */
    default int gidIndex(Context c) {
        return -1;
    }

    /**
     * {@link Capability#PORT_STATE_CONTROL}: a fresh open of a device of this setup that no other suite
     * uses (its port goes down).
     */
    default Context openIsolated() {
        throw new UnsupportedOperationException(name() + " has no device of its own to take down");
    }

    /** The device at the other end of connections from {@link #openIsolated()}'s; by default {@link #openPeer()}'s. */
    default Context openIsolatedPeer() {
        return openPeer();
    }

    /** {@link Capability#PORT_STATE_CONTROL}: takes port 1 of {@code c}'s device down or up (rxe: the netdev's carrier). */
    default void setPortUp(Context c, boolean up) {
        throw new UnsupportedOperationException(name() + " cannot change a port's state");
    }

    /** {@link Capability#SMALL_LIMITS}: a fresh open of a device whose every limit is reachable (e.g. 16 of each). */
    default Context openSmallLimits() {
        throw new UnsupportedOperationException(name() + " has no device with small limits");
    }

    /**
     * {@link Capability#HIDDEN_OBJECT_COUNT}: how many objects the device holds that a test cannot see
     * (keys, QP numbers); a leak changes it. -1 if the provider cannot tell.
     */
    default long hiddenObjects(Context c) {
        return -1;
    }

    /** {@link Capability#LOSSY_LINK}: the faults injected so far on this setup's links, both directions. */
    default Faults faults() {
        return Faults.NONE;
    }

    /**
     * Why the device of this setup is known to answer differently from the contract in
     * {@code suite.method} (the invocation shown as {@code displayName}), or null when it is not. Such a
     * test is skipped with this reason, so the report shows every place a real device departs from
     * docs/SEMANTICS.md and why (e.g. what Linux 6.1's rxe does instead, which a C program sees too).
     */
    default String knownDeviation(String suite, String method, String displayName) {
        return null;
    }

    /**
     * Why this setup's QPs cannot be connected by {@code modify_qp} (INIT, RTR, RTS with the peer's QPN
     * and GID), or null when they can. An iWARP device is one: its RC QPs reach RTS only through the
     * connection manager (iw_cm over a TCP connection). Tests that connect QPs so are aborted with the
     * reason instead of failing.
     */
    default String modifyQpConnectUnsupported() {
        return null;
    }

    /**
     * Why {@code ibv_query_qp} on this setup's device does not report a QP's state, or null when it does
     * (siw's query_qp always says RESET). A test that checks a state through the query is aborted with the
     * reason at that check, after everything before it was checked.
     */
    default String qpStateUnreported() {
        return null;
    }

    /**
     * Whether this setup's provider lets the test process set a controlled Q_Key (bit 31, S-QP-10).
     * False (the default) where the caller is unprivileged, as the soft device treats every caller; a
     * native setup answers as the kernel decides (CAP_NET_RAW, or the system's privileged-qkey mode).
     */
    default boolean controlledQkeyAllowed() {
        return false;
    }

    /**
     * How this setup connects pairs of queue pairs other than by {@code modify_qp}, or null (the default:
     * every pair is connected by modify_qp). With a connector, {@link AbstractVerbsTest#connect} hands it
     * the pairs of the types it {@linkplain QpConnector#connects connects}, even where modify_qp would
     * work: a setup of connection-manager connected QPs.
     */
    default QpConnector qpConnector() {
        return null;
    }

    /** Counts of injected faults. */
    record Faults(long lost, long duplicated, long reordered) {
        public static final Faults NONE = new Faults(0, 0, 0);

        /** The faults between {@code before} and this count. */
        public Faults since(Faults before) {
            return new Faults(lost - before.lost, duplicated - before.duplicated, reordered - before.reordered);
        }
    }
}
