// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * How the connection manager words its errors: the errno first (a {@link VerbsException} puts its name
 * there), then the step that failed, the peer's address and port (or the local one for a step that has
 * no peer: bind, listen, get request), then what went wrong, with every timeout in human units
 * ("30 s", "500 ms"), never a {@link Duration}'s {@code PT30S}.
 */
final class CmWords {
    private CmWords() {
    }

    /** {@return {@code a}'s address and port as a C programmer writes them: 192.0.2.7:7471, [fe80::1]:7471} */
    static String addr(InetSocketAddress a) {
        if (a == null) {
            return "?";
        }
        InetAddress ip = a.getAddress();
        String host = ip == null ? a.getHostString() : ip.getHostAddress();
        return (ip instanceof Inet6Address ? "[" + compress(host) + "]" : host) + ":" + a.getPort();
    }

    /** {@return an IPv6 address with its longest run of zero groups as "::" (RFC 5952), as inet_ntop writes it} */
    static String compress(String v6) {
        int pct = v6.indexOf('%');
        String scope = pct < 0 ? "" : v6.substring(pct);
        String[] g = (pct < 0 ? v6 : v6.substring(0, pct)).split(":");
        int best = -1;
        int bestLen = 1;
        for (int i = 0; i < g.length; i++) {
            int j = i;
            while (j < g.length && g[j].equals("0")) {
                j++;
            }
            if (j - i > bestLen) {
                best = i;
                bestLen = j - i;
            }
        }
        if (best < 0) {
            return String.join(":", g) + scope;
        }
        String head = String.join(":", java.util.Arrays.copyOfRange(g, 0, best));
        String tail = String.join(":", java.util.Arrays.copyOfRange(g, best + bestLen, g.length));
        return head + "::" + tail + scope;
    }

    /** {@return {@code d} in human units ("null" for null)} @param d a duration */
    static String duration(Duration d) {
        return d == null ? "null" : duration(d.toNanos());
    }

    /** {@return {@code ns} nanoseconds in human units: "2 min", "30 s", "1.5 s", "500 ms", "250 us", "10 ns"} */
    static String duration(long ns) {
        if (ns < 0) {
            return "-" + duration(ns == Long.MIN_VALUE ? Long.MAX_VALUE : -ns);
        }
        if (ns >= 60_000_000_000L && ns % 60_000_000_000L == 0) {
            return ns / 60_000_000_000L + " min";
        }
        if (ns >= 1_000_000_000L) {
            return decimal(ns, 1_000_000_000L) + " s";
        }
        if (ns >= 1_000_000L) {
            return decimal(ns, 1_000_000L) + " ms";
        }
        return ns >= 1_000L ? decimal(ns, 1_000L) + " us" : ns + " ns";
    }

    /** {@code v / unit} to three significant digits (all of a whole number), trailing zeros dropped. */
    private static String decimal(long v, long unit) {
        if (v % unit == 0) {
            return Long.toString(v / unit);
        }
        double x = (double) v / unit;
        int decimals = x >= 100 ? 0 : x >= 10 ? 1 : 2;
        String t = java.math.BigDecimal.valueOf(x).setScale(decimals, java.math.RoundingMode.HALF_UP).toPlainString();
        return t.contains(".") ? t.replaceAll("0+$", "").replaceAll("\\.$", "") : t;
    }

    /**
     * {@return the step and where it ran: "connect to 192.0.2.7:7471 (local 192.0.2.1:40112)", "listen on
     * 0.0.0.0:7471", "connect (local 192.0.2.1:7000)" for a step whose peer is not known yet}
     *
     * @param step what was being done ("connect to", "accept from", "listen on", ...)
     * @param peer the peer's address and port, or null when the step has none
     * @param local the local address and port, or null
     */
    static String where(String step, InetSocketAddress peer, InetSocketAddress local) {
        if (peer != null) {
            return step + " " + addr(peer) + (local == null ? "" : " (local " + addr(local) + ")");
        }
        if (local != null && (step.endsWith(" on") || step.startsWith("bind"))) {
            return step + " " + addr(local); // a step about the local address: bind to, listen on
        }
        String bare = step.replaceFirst(" (to|from|of|on|with|for)$", "");
        return local == null ? bare : bare + " (local " + addr(local) + ")";
    }

    /** {@return the error: errno, then the step and where, then what} */
    static VerbsException error(int errno, String step, InetSocketAddress peer, InetSocketAddress local, String what) {
        return new VerbsException(errno, where(step, peer, local) + ": " + what);
    }

    /** {@return the step of an id: its peer, or its local address for one that has none} */
    static VerbsException error(int errno, String step, CmId id, String what) {
        return error(errno, step, id.remote, id.local, what);
    }

    /** EINVAL: the id's state does not allow the step (under the engine's lock: reads the id's fields). */
    static VerbsException wrongState(CmId id, String step) {
        String hint = switch (id.state) {
            case IDLE -> step.startsWith("connect") ? " (resolve the address and the route first)" : "";
            case ADDR_RESOLVED -> step.startsWith("connect") ? " (resolve the route first)" : "";
            case DESTROYED, DONE -> " (the connection has ended)";
            default -> "";
        };
        return error(Errno.EINVAL, step, id, "not possible in state " + id.state + hint);
    }

    /**
     * {@return {@code e}, or, when its words do not name {@code where}, the same errno with the step and
     * {@code where} in front} (for the Java front's errors that come from a step of a lower layer)
     */
    static VerbsException naming(VerbsException e, String step, InetSocketAddress where) {
        String a = addr(where);
        String m = String.valueOf(e.getMessage());
        if (m.contains(a)) {
            return e;
        }
        String prefix = org.rdma4j.verbs.Errno.name(e.errno()) + ": ";
        return new VerbsException(e.errno(), step + " " + a + ": " + (m.startsWith(prefix)
                ? m.substring(prefix.length()) : m), e);
    }

    /** EADDRINUSE: {@code port} (0: every ephemeral port) of the port space is taken, by {@code holder} if known. */
    static VerbsException portInUse(InetAddress addr, int port, PortSpace ps, InetSocketAddress holder) {
        return error(Errno.EADDRINUSE, "bind to", null, new InetSocketAddress(addr, port), port == 0
                ? "no free port in " + ps : "port " + port + " of " + ps + " is in use" + (holder == null ? ""
                : " (bound to " + addr(holder) + ")"));
    }

    /** EBADF: the program closed the id. */
    static VerbsException closed(CmId id, String step) {
        return error(Errno.EBADF, step, id, "the id is closed");
    }

    /** EADDRNOTAVAIL for a bind to an address no device has, saying how to get one. */
    static VerbsException noDevice(String step, InetSocketAddress addr) {
        String a = addr.getAddress().getHostAddress();
        return error(Errno.EADDRNOTAVAIL, step, null, addr, "no RDMA device has the address " + a
                + " (make one: EndpointOptions.softDevice(SoftDevicePolicy.ANY_ADDRESS), or Verbs.createDevice(\""
                + "soft:udp?addr=" + a + "\"), or rxe: rdma link add rxe0 type rxe netdev <the interface of " + a
                + ">)");
    }

    /**
     * {@return the step an endpoint was waiting for {@code want} in}
     *
     * @param want the event waited for
     * @param request whether the endpoint is a connection request's (its ESTABLISHED ends an accept)
     */
    static String step(CmEventType want, boolean request) {
        return switch (want) {
            case ADDR_RESOLVED -> "resolve address of";
            case ROUTE_RESOLVED -> "resolve route to";
            case CONNECT_REQUEST -> "get request on";
            case ESTABLISHED -> request ? "accept from" : "connect to";
            case DISCONNECTED -> "disconnect from";
            default -> "wait for " + want + " with";
        };
    }

    /** ETIMEDOUT: no {@code want} came within the endpoint's bound. */
    static VerbsException timedOut(CmId id, CmEventType want, boolean request, InetSocketAddress peer, long ns) {
        InetSocketAddress p = peer != null ? peer : id.remoteAddress();
        return error(Errno.ETIMEDOUT, step(want, request), p, id.localAddress(),
                "no " + want + " within " + duration(ns) + hintFor(want, request));
    }

    private static String hintFor(CmEventType want, boolean request) {
        if (want == CmEventType.ESTABLISHED) {
            return request ? " (the client sent no RTU)" : " (is a server listening there, and is its device up?)";
        }
        return "";
    }

    /**
     * The error for an event that ended a step other than as wanted, with the errno librdmacm's
     * ucma_complete sets: ECONNREFUSED for REJECTED, the event's negative status as errno, ECONNRESET
     * for DISCONNECTED, ENODEV for DEVICE_REMOVAL, else EINVAL.
     */
    static VerbsException failure(CmEvent e, CmEventType want, boolean request, InetSocketAddress peer) {
        CmId id = e.id();
        InetSocketAddress p = peer != null ? peer : id == null ? null : id.remoteAddress();
        InetSocketAddress local = id == null ? null : id.localAddress();
        StringBuilder what = new StringBuilder().append(e.type());
        int errno;
        if (e.type() == CmEventType.REJECTED) {
            errno = Errno.ECONNREFUSED;
            what.append(", reason ").append(e.status()).append(" (").append(rejectReason(e.status(), p)).append(')');
        } else if (e.status() != 0) {
            errno = Math.abs(e.status());
            what.append(" (status ").append(e.status()).append(')');
            if (e.type() == CmEventType.UNREACHABLE && id != null) {
                what.append(": the peer's CM did not answer ").append(retries(id));
            }
        } else {
            errno = switch (e.type()) {
                case DISCONNECTED -> Endpoint.ECONNRESET;
                case DEVICE_REMOVAL -> Errno.ENODEV;
                default -> Errno.EINVAL;
            };
        }
        if (e.detail() != null) {
            what.append(": ").append(e.detail());
        } else {
            what.append(switch (e.type()) {
                case ROUTE_ERROR -> ": the device's port is down";
                case CONNECT_ERROR -> ": the QP could not be moved to RTR or RTS";
                case DISCONNECTED -> ": the peer disconnected";
                case DEVICE_REMOVAL -> ": the device went away";
                default -> "";
            });
        }
        return error(errno, step(want, request), p, local, what.toString());
    }

    /** {@return how long the CM tried: "in 16 tries 4.4 s apart (about 70 s; response timeout 20, 15 retries)"} */
    static String retries(CmId id) {
        int rt = CmEngine.INSTANCE.read(() -> id.responseTimeout);
        int max = CmEngine.INSTANCE.read(() -> id.maxCmRetries);
        int ack = CmEngine.INSTANCE.read(() -> id.ackTimeout);
        long each = CmMad.cmTimeNs(rt) + CmMad.cmTimeNs(ack);
        return "in " + (max + 1) + " tries " + duration(each) + " apart (about " + duration((max + 1) * each)
                + "; response timeout " + rt + ", " + max + (max == 1 ? " retry)" : " retries)");
    }

    /** IBTA vol. 1 table 112's reject reasons, by number (the kernel's {@code enum ib_cm_rej_reason}). */
    private static final String[] REJ_REASONS = {null, "no QP available", "no EEC available",
        "no resources available", "timeout", "unsupported request", "invalid communication ID",
        "invalid communication instance", "invalid service ID", "invalid transport service type",
        "stale connection", "RDC does not exist", "primary remote port GID rejected",
        "primary remote port LID rejected", "invalid primary SL", "invalid primary traffic class",
        "invalid primary hop limit", "invalid primary packet rate", "alternate remote port GID rejected",
        "alternate remote port LID rejected", "invalid alternate SL", "invalid alternate traffic class",
        "invalid alternate hop limit", "invalid alternate packet rate", "port and CM redirection",
        "port redirection", "invalid path MTU", "insufficient responder resources", "consumer defined",
        "invalid RNR NAK retry count", "duplicate local communication ID", "invalid class version",
        "invalid primary flow label", "invalid alternate flow label"};

    /** {@return a REJ reason in words (IBTA vol. 1 table 112), with what it usually means for rdma_cm} */
    static String rejectReason(int reason, InetSocketAddress peer) {
        String name = reason > 0 && reason < REJ_REASONS.length ? REJ_REASONS[reason] : "IB CM reject reason " + reason;
        return switch (reason) {
            case CmRej.REASON_INVALID_SERVICE_ID -> name + ": nothing listens on "
                    + (peer == null ? "that port" : "port " + peer.getPort() + " there");
            case CmRej.REASON_CONSUMER_DEFINED -> name + ": the peer's program rejected the connection, or its"
                    + " listen backlog is full";
            case CmRej.REASON_STALE_CONN -> name + ": the peer still holds an old connection of these ids";
            default -> name;
        };
    }
}
