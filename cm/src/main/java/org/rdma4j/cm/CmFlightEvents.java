// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetSocketAddress;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The connection manager's JDK Flight Recorder events: a connect started, a connect request received,
 * a connection established, rejected (with the reason by number and by name), timed out, disconnected.
 * Off unless a recording enables them ({@code jfr print --categories rdma4j}); disabled, an emit builds
 * nothing. Emitted on connection set-up and tear-down only, never on the data path. Thread safe.
 */
final class CmFlightEvents {
    private CmFlightEvents() {
    }

    /** What every CM event names: the local and the peer's address and port. */
    abstract static class CmEventBase extends Event {
        @Label("Local")
        @Description("The local address and port")
        String local;
        @Label("Peer")
        @Description("The peer's address and port")
        String peer;
    }

    @Name("org.rdma4j.cm.Connect")
    @Label("CM Connect")
    @Category({"rdma4j", "Connection manager"})
    @Description("rdma_connect: a REQ goes to the peer")
    @StackTrace(false)
    static final class Connect extends CmEventBase {
    }

    @Name("org.rdma4j.cm.ConnectRequest")
    @Label("CM Connect Request")
    @Category({"rdma4j", "Connection manager"})
    @Description("A listener got a peer's REQ (CONNECT_REQUEST)")
    @StackTrace(false)
    static final class ConnectRequest extends CmEventBase {
    }

    @Name("org.rdma4j.cm.Established")
    @Label("CM Established")
    @Category({"rdma4j", "Connection manager"})
    @Description("A connection is established (ESTABLISHED)")
    @StackTrace(false)
    static final class Established extends CmEventBase {
    }

    @Name("org.rdma4j.cm.Rejected")
    @Label("CM Rejected")
    @Category({"rdma4j", "Connection manager"})
    @Description("The peer rejected the connection (REJECTED): the REJ's reason, and its private data "
            + "as printable ASCII")
    @StackTrace(false)
    static final class Rejected extends CmEventBase {
        @Label("Reason")
        int reason;
        @Label("Reason Name")
        String reasonName;
        @Label("Private Data")
        @Description("The REJ's private data up to its first NUL, every byte outside 0x20..0x7E as '?'")
        String privateData;
    }

    @Name("org.rdma4j.cm.Timeout")
    @Label("CM Timeout")
    @Category({"rdma4j", "Connection manager"})
    @Description("A step timed out or found no peer: UNREACHABLE (no answer to the REQ), or ADDR_ERROR, "
            + "ROUTE_ERROR, DISCONNECTED with -ETIMEDOUT")
    @StackTrace(false)
    static final class Timeout extends CmEventBase {
        @Label("Event")
        String event;
        @Label("Status")
        int status;
        @Label("Detail")
        String detail;
    }

    @Name("org.rdma4j.cm.Disconnected")
    @Label("CM Disconnected")
    @Category({"rdma4j", "Connection manager"})
    @Description("A connection ended (DISCONNECTED)")
    @StackTrace(false)
    static final class Disconnected extends CmEventBase {
        @Label("Status")
        int status;
    }

    /*
     * Whether an event type is being recorded. Before Flight Recorder starts (the usual case) this is one
     * static call: the event classes are not touched, since registering them costs the first connection
     * hundreds of milliseconds (more than a quick CM response timeout).
     */
    private static final Gate CONNECT_PROBE = new Gate(Connect.class);
    private static final Gate REQUEST_PROBE = new Gate(ConnectRequest.class);
    private static final Gate ESTABLISHED_PROBE = new Gate(Established.class);
    private static final Gate REJECTED_PROBE = new Gate(Rejected.class);
    private static final Gate TIMEOUT_PROBE = new Gate(Timeout.class);
    private static final Gate DISCONNECTED_PROBE = new Gate(Disconnected.class);

    /** {@return whether a recording wants any of these events (else nothing need be looked up for them)} */
    static boolean anyEnabled() {
        return FlightRecorder.isInitialized() && (CONNECT_PROBE.isEnabled() || REQUEST_PROBE.isEnabled()
                || ESTABLISHED_PROBE.isEnabled() || REJECTED_PROBE.isEnabled() || TIMEOUT_PROBE.isEnabled()
                || DISCONNECTED_PROBE.isEnabled());
    }

    private static final class Gate {
        private final Class<? extends Event> eventClass;
        private volatile EventType type;

        Gate(Class<? extends Event> eventClass) {
            this.eventClass = eventClass;
        }

        boolean isEnabled() {
            if (!FlightRecorder.isInitialized()) {
                return false;
            }
            EventType t = type;
            if (t == null) {
                t = EventType.getEventType(eventClass);
                type = t;
            }
            return t.isEnabled();
        }
    }

    static void connect(InetSocketAddress local, InetSocketAddress peer) {
        if (CONNECT_PROBE.isEnabled()) {
            Connect e = new Connect();
            fill(e, local, peer);
            e.commit();
        }
    }

    /** One event a channel is about to get; those of interest become flight-recorder events. */
    static void posted(CmEventType type, int status, InetSocketAddress local, InetSocketAddress peer,
                       byte[] privateData, String detail) {
        switch (type) {
            case CONNECT_REQUEST -> {
                if (REQUEST_PROBE.isEnabled()) {
                    ConnectRequest e = new ConnectRequest();
                    fill(e, local, peer);
                    e.commit();
                }
            }
            case ESTABLISHED -> {
                if (ESTABLISHED_PROBE.isEnabled()) {
                    Established e = new Established();
                    fill(e, local, peer);
                    e.commit();
                }
            }
            case REJECTED -> {
                if (REJECTED_PROBE.isEnabled()) {
                    Rejected e = new Rejected();
                    fill(e, local, peer);
                    e.reason = status;
                    e.reasonName = CmRejectReasons.name(status);
                    e.privateData = org.rdma4j.verbs.spi.PeerText.printable(privateData);
                    e.commit();
                }
            }
            case DISCONNECTED -> {
                if (status == -org.rdma4j.verbs.Errno.ETIMEDOUT) {
                    timeout(type, status, local, peer, detail);
                }
                if (DISCONNECTED_PROBE.isEnabled()) {
                    Disconnected e = new Disconnected();
                    fill(e, local, peer);
                    e.status = status;
                    e.commit();
                }
            }
            case UNREACHABLE -> timeout(type, status, local, peer, detail);
            case ADDR_ERROR, ROUTE_ERROR -> {
                if (status == -org.rdma4j.verbs.Errno.ETIMEDOUT) {
                    timeout(type, status, local, peer, detail);
                }
            }
            default -> {
            }
        }
    }

    private static void timeout(CmEventType type, int status, InetSocketAddress local, InetSocketAddress peer,
                                String detail) {
        if (TIMEOUT_PROBE.isEnabled()) {
            Timeout e = new Timeout();
            fill(e, local, peer);
            e.event = type.name();
            e.status = status;
            e.detail = detail;
            e.commit();
        }
    }

    private static void fill(CmEventBase e, InetSocketAddress local, InetSocketAddress peer) {
        e.local = CmLog.address(local);
        e.peer = CmLog.address(peer);
    }
}
