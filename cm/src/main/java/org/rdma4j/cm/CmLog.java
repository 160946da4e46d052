// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.spi.LogRateLimit;
import org.rdma4j.verbs.spi.PeerText;

/**
 * What the connection manager tells an operator, on the {@code System.Logger} category
 * {@value #CATEGORY}, and (through {@link CmFlightEvents}) the flight recorder:
 * <ul>
 * <li>WARNING: a peer unreachable (UNREACHABLE: no answer to the REQ), an address or route error, a
 *     CONNECT_ERROR, a DREQ the peer never answered, a device removed under ids; CM messages dropped
 *     because they matched no connection (forged or stale), at most one line a minute with the count;</li>
 * <li>DEBUG: connect, connect request, accept, reject, established, rejected (every reason, by name),
 *     disconnect (java.util.logging prints INFO and up by default: a program's stderr stays its own);</li>
 * <li>TRACE: the other events (ADDR_RESOLVED, ROUTE_RESOLVED, TIMEWAIT_EXIT, ...).</li>
 * </ul>
 * Every line names the local and the peer's address and port; a peer's private data shows only through
 * {@link PeerText}. Connection set-up and tear-down only. Thread safe.
 */
final class CmLog {
    /** The connection manager's logger category. */
    static final String CATEGORY = "org.rdma4j.cm";
    private static final Logger LOG = System.getLogger(CATEGORY);
    /** At most one line a minute about dropped messages (a test may put a fresh one). */
    static volatile LogRateLimit drops = new LogRateLimit(TimeUnit.MINUTES.toNanos(1));

    private CmLog() {
    }

    /**
     * Makes the logger and loads the flight-recorder event classes now: java.util.logging reads its
     * configuration when the first logger is made, and loading the first event classes takes time too,
     * more than the handling of a REQ may under a quick CM response timeout.
     */
    static void ready() {
        LOG.isLoggable(Level.WARNING);
        CmFlightEvents.anyEnabled();
    }

    /** rdma_connect on {@code id}. */
    static void connecting(CmId id) {
        if (!LOG.isLoggable(Level.DEBUG) && !CmFlightEvents.anyEnabled()) {
            return;
        }
        InetSocketAddress local = local(id);
        InetSocketAddress peer = peer(id);
        CmFlightEvents.connect(local, peer);
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "connect " + address(local) + " -> " + address(peer) + ": REQ sent");
        }
    }

    /** rdma_accept or rdma_reject ({@code accept} false) on a connect request's {@code id}. */
    static void answering(CmId id, boolean accept) {
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, (accept ? "accept " : "reject (consumer defined) ") + address(local(id)) + " <- "
                    + address(peer(id)));
        }
    }

    /** An event about to be queued on a channel. */
    static void posted(CmEvent e) {
        Level level = level(e.type(), e.status());
        boolean log = LOG.isLoggable(level);
        if (!log && !CmFlightEvents.anyEnabled()) {
            return; // the usual case: nothing looked up
        }
        CmId id = e.id();
        InetSocketAddress local = local(id);
        InetSocketAddress peer = peer(id);
        CmFlightEvents.posted(e.type(), e.status(), local, peer, e.privateData(), e.detail());
        if (!log) {
            return;
        }
        String pair = address(local) + (e.type() == CmEventType.CONNECT_REQUEST ? " <- " : " -> ") + address(peer);
        String what = switch (e.type()) {
            case REJECTED -> "rejected by the peer: reason " + e.status() + " (" + CmRejectReasons.name(e.status())
                    + ")" + (e.privateData().length == 0 || e.privateData()[0] == 0 ? ""
                    : ", private data \"" + PeerText.printable(e.privateData()) + "\"");
            case UNREACHABLE -> "peer unreachable: " + (e.status() < 0 ? status(e.status()) + " (no answer to the "
                    + "REQ within the CM response timeout and its retries)" : "SIDR_REP status " + e.status());
            case DISCONNECTED -> e.status() == -Errno.ETIMEDOUT
                    ? "disconnected: the peer did not answer the DREQ (-ETIMEDOUT)" : "disconnected";
            default -> e.type() + (e.status() == 0 ? "" : " " + status(e.status()));
        };
        LOG.log(level, pair + ": " + what + (e.detail() == null ? "" : " (" + e.detail() + ")"));
    }

    /** A received CM message that matched no connection ({@code name}: REQ, REP, REJ, ...) on {@code device}. */
    static void dropped(String device, int port, String name) {
        if (!LOG.isLoggable(Level.WARNING)) {
            return;
        }
        long n = drops.admit();
        if (n > 0) {
            LOG.log(Level.WARNING, n + " CM message(s) dropped since the last report: they matched no connection "
                    + "(forged, stale, or LAP/APR); the last: " + name + " on " + device + " port " + port
                    + "; CmId.droppedMessages() counts them by kind");
        }
    }

    private static Level level(CmEventType type, int status) {
        return switch (type) {
            case UNREACHABLE, ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, DEVICE_REMOVAL, MULTICAST_ERROR -> Level.WARNING;
            case DISCONNECTED -> status == -Errno.ETIMEDOUT ? Level.WARNING : Level.DEBUG;
            case CONNECT_REQUEST, ESTABLISHED, REJECTED -> Level.DEBUG;
            default -> Level.TRACE;
        };
    }

    private static String status(int status) {
        return status < 0 ? "-" + Errno.name(-status) : "status " + status;
    }

    private static InetSocketAddress local(CmId id) {
        ProviderCmId p = id.provider;
        return p != null ? p.providerId().localAddress() : id.local;
    }

    private static InetSocketAddress peer(CmId id) {
        ProviderCmId p = id.provider;
        return p != null ? p.providerId().remoteAddress() : id.remote;
    }

    /** {@return "address:port" ([v6]:port), or "(none)"} */
    static String address(InetSocketAddress a) {
        if (a == null) {
            return "(none)";
        }
        String host = a.getAddress() == null ? PeerText.printable(a.getHostString()) : a.getAddress().getHostAddress();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
