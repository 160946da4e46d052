// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.time.Duration;
import java.util.Objects;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;

/**
 * How {@link Endpoint}s are made: rdma_create_ep (a passive endpoint bound, keeping the QP attributes
 * for its requests; an active one resolved, with its QP) and the endpoint of a request rdma_get_request
 * returns (its id moved to a channel of its own, its QP made from the listener's attributes). An
 * endpoint that cannot be completed is closed before the error is thrown.
 */
final class EndpointCreate {
    private EndpointCreate() {
    }

    /** {@link Endpoint#create(AddrInfo, ProtectionDomain, QpInitAttr, Duration)}. */
    static Endpoint create(AddrInfo res, ProtectionDomain pd, QpInitAttr attr, Duration timeout)
            throws InterruptedException {
        Objects.requireNonNull(res, "res");
        CmEventChannel ch = new CmEventChannel();
        Endpoint ep = null;
        boolean ok = false;
        try {
            CmId id = ch.createId(res.portSpace());
            ep = new Endpoint(ch, id, res.passive());
            ep.timeout(timeout);
            if (res.passive()) {
                id.bindAddr(res.source());
                ep.listenPd = pd;
                ep.listenAttr = attr == null ? null : EndpointVerbs.copy(attr);
            } else {
                id.resolveAddr(res.source(), res.destination(), Endpoint.RESOLVE_TIMEOUT_MS);
                ep.events.await(ep.timeoutNs, CmEventType.ADDR_RESOLVED, res.destination());
                id.resolveRoute(Endpoint.RESOLVE_TIMEOUT_MS);
                ep.events.await(ep.timeoutNs, CmEventType.ROUTE_RESOLVED, res.destination());
                if (attr != null) {
                    ep.createQp(pd, attr);
                }
            }
            ok = true;
            return ep;
        } finally {
            if (!ok) {
                if (ep != null) {
                    ep.closeQuietly();
                } else {
                    ch.close();
                }
            }
        }
    }

    /** The endpoint of the CONNECT_REQUEST {@code e} of a listener that keeps {@code listenPd} and {@code listenAttr}. */
    static Endpoint forRequest(CmEvent e, long timeoutNs, ProtectionDomain listenPd, QpInitAttr listenAttr) {
        CmId child = e.id();
        CmEventChannel childChannel = new CmEventChannel();
        child.migrate(childChannel); // rdma_migrate_id: its queued events too go to its endpoint's channel
        Endpoint c = new Endpoint(childChannel, child, false);
        c.timeoutNs = timeoutNs;
        c.events.lastEvent = e;
        c.events.request = e;
        boolean ok = false;
        try {
            if (listenAttr != null) {
                c.createQp(listenPd, listenAttr);
            }
            ok = true;
            return c;
        } finally {
            if (!ok) {
                c.closeQuietly();
            }
        }
    }
}
