// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance.cm;

import static org.rdma4j.verbs.QpAttrMask.*;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.conformance.QpBringUp;
import org.rdma4j.conformance.QpConnector;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.VerbsException;

/**
 * Connects RC pairs through the connection manager the way a program with QPs of its own does it
 * ({@code rping -q}, rdma_cm's "id without a QP"): B's side listens on {@code passive}, A's side resolves
 * it from {@code activeSource} and connects with A's QP number in the connection parameters; each side
 * moves its own QP with {@link CmId#initQpAttr}, where the transport asks for that: an IB CM (soft) hands
 * out the RTR and RTS attributes, B moves before it accepts, A after CONNECT_RESPONSE and then sends the
 * RTU ({@link CmId#establish}); iWARP's CM (siw) gives no state for RTR and RTS because iw_cm moves the
 * QP to RTS itself when its TCP stream is up, so there both sides only move to INIT and wait for
 * ESTABLISHED.
 *
 * <p>The attributes the CM hands out are overlaid with the suite's own (path MTU, PSNs, timeout, retry
 * counts, RNR timer, read/atomic depths) wherever the CM's mask has the bit, so a pair behaves as the
 * modify_qp path's would; the AV and the remote QPN stay the CM's. Every wait is bounded by {@link
 * #WAIT_MS}; a failed step closes what it made and says which step and event it was.
 */
public final class CmQpConnector implements QpConnector {
    /** Bound on each CM step (resolve, request, response, establishment). */
    public static final long WAIT_MS = 10_000;

    private final InetAddress passive;
    private final InetAddress activeSource;

    /**
     * @param passive the address B's side listens on (an address of B's device)
     * @param activeSource the source address A's side resolves from (an address of A's device), or null
     *     to let the CM choose
     */
    public CmQpConnector(InetAddress passive, InetAddress activeSource) {
        this.passive = Objects.requireNonNull(passive, "passive");
        this.activeSource = activeSource;
    }

    @Override
    public boolean connects(QpType type) {
        return type == QpType.RC;
    }

    @Override
    public Connection connect(Side a, Side b, Link link) {
        Conn c = new Conn();
        boolean ok = false;
        try {
            c.connect(a, b, link);
            ok = true;
            return c;
        } finally {
            if (!ok) {
                c.close();
            }
        }
    }

    @Override
    public String toString() {
        return "rdma_cm from " + (activeSource == null ? "any" : activeSource.getHostAddress()) + " to "
                + passive.getHostAddress();
    }

    /** One connection: two event channels (A's, B's listener's) and three ids. */
    private final class Conn implements Connection {
        private final CmEventChannel activeChannel = new CmEventChannel();
        private final CmEventChannel passiveChannel = new CmEventChannel();
        private CmId listener;
        private CmId active;
        private CmId accepted;
        private volatile boolean closed;

        void connect(Side a, Side b, Link link) {
            listener = passiveChannel.createId(PortSpace.TCP);
            listener.bindAddr(new InetSocketAddress(passive, 0));
            listener.listen(1);
            int port = listener.localAddress().getPort();

            active = activeChannel.createId(PortSpace.TCP);
            active.resolveAddr(activeSource == null ? null : new InetSocketAddress(activeSource, 0),
                    new InetSocketAddress(passive, port), (int) WAIT_MS);
            await(activeChannel, CmEventType.ADDR_RESOLVED, "resolving " + passive.getHostAddress());
            active.resolveRoute((int) WAIT_MS);
            await(activeChannel, CmEventType.ROUTE_RESOLVED, "resolving the route");
            sameDevice(active, a.qp(), "A");

            QpBringUp.toInit(a.qp(), a.accessFlags(), 0);
            active.connect(param(link, a.qp()));
            CmEvent req = await(passiveChannel, CmEventType.CONNECT_REQUEST, "waiting for A's request");
            accepted = req.id();
            sameDevice(accepted, b.qp(), "B");

            QpBringUp.toInit(b.qp(), b.accessFlags(), 0);
            move(accepted, b.qp(), QpState.RTR, b, a, link);
            move(accepted, b.qp(), QpState.RTS, b, a, link);
            accepted.accept(param(link, b.qp()));

            CmEvent answer = await(activeChannel, null, "waiting for B's answer");
            if (answer.type() == CmEventType.CONNECT_RESPONSE) {
                // IB CM, a QP of the program's own: it moves the QP, then sends the RTU
                move(active, a.qp(), QpState.RTR, a, b, link);
                move(active, a.qp(), QpState.RTS, a, b, link);
                active.establish();
            } else if (answer.type() != CmEventType.ESTABLISHED) {
                throw new IllegalStateException("connecting " + this + ": A got " + answer
                        + " instead of CONNECT_RESPONSE or ESTABLISHED");
            }
            await(passiveChannel, CmEventType.ESTABLISHED, "waiting for B's ESTABLISHED");
        }

        /** rdma_init_qp_attr's values for {@code to}, overlaid with the suite's where the mask has the bit. */
        private void move(CmId id, QueuePair qp, QpState to, Side self, Side peer, Link link) {
            QpAttr attr = id.initQpAttr(to);
            int mask = attr.mask();
            if ((mask & STATE) == 0) {
                return; // iWARP: the CM moves the QP to RTS itself once the stream is up
            }
            if ((mask & PATH_MTU) != 0) {
                attr.pathMtu = link.mtu();
            }
            if ((mask & RQ_PSN) != 0) {
                attr.rqPsn = peer.sendPsn();
            }
            if ((mask & SQ_PSN) != 0) {
                attr.sqPsn = self.sendPsn();
            }
            if ((mask & MIN_RNR_TIMER) != 0) {
                attr.minRnrTimer = self.minRnrTimer();
            }
            if ((mask & MAX_DEST_RD_ATOMIC) != 0) {
                attr.maxDestRdAtomic = link.maxDestRdAtomic();
            }
            if ((mask & MAX_QP_RD_ATOMIC) != 0) {
                attr.maxRdAtomic = link.maxRdAtomic();
            }
            if ((mask & TIMEOUT) != 0) {
                attr.timeout = link.timeout();
            }
            if ((mask & RETRY_CNT) != 0) {
                attr.retryCnt = link.retryCnt();
            }
            if ((mask & RNR_RETRY) != 0) {
                attr.rnrRetry = link.rnrRetry();
            }
            qp.modify(attr, mask);
        }

        private static ConnParam param(Link link, QueuePair qp) {
            return new ConnParam().qpNum(qp.qpn()).responderResources(link.maxDestRdAtomic())
                    .initiatorDepth(link.maxRdAtomic()).retryCount(Math.min(7, link.retryCnt()))
                    .rnrRetryCount(Math.min(7, link.rnrRetry()));
        }

        private void sameDevice(CmId id, QueuePair qp, String side) {
            String cm = id.context().device().name();
            String own = qp.context().device().name();
            if (!cm.equals(own)) {
                throw new IllegalStateException("connecting " + this + ": the CM put side " + side + " on " + cm
                        + ", but its QP is on " + own);
            }
        }

        /** The next event on {@code ch} (acknowledged); of {@code type} unless that is null. */
        private CmEvent await(CmEventChannel ch, CmEventType type, String step) {
            CmEvent e;
            try {
                e = ch.getEvent(WAIT_MS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("connecting " + this + ": interrupted " + step, ie);
            }
            if (e == null) {
                throw new IllegalStateException("connecting " + this + ": no event in " + WAIT_MS + " ms "
                        + step + (type != null ? " (" + type + ")" : ""));
            }
            e.ack();
            if (type != null && e.type() != type) {
                throw new IllegalStateException("connecting " + this + ": got " + e + " " + step + " instead of "
                        + type + (e.status() != 0 ? " (status " + e.status() + ")" : ""));
            }
            return e;
        }

        @Override
        public boolean isClosed() {
            return closed;
        }

        /** Destroys the ids (a connected one disconnects) and the channels; idempotent. */
        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            RuntimeException first = null;
            for (AutoCloseable c : new AutoCloseable[] {active, accepted, listener, activeChannel, passiveChannel}) {
                if (c == null) {
                    continue;
                }
                try {
                    c.close();
                } catch (VerbsException | IllegalStateException e) {
                    first = first == null ? e : first;
                } catch (Exception e) {
                    first = first == null ? new IllegalStateException(e) : first;
                }
            }
            if (first != null) {
                throw first;
            }
        }

        @Override
        public String toString() {
            return CmQpConnector.this.toString();
        }
    }
}
