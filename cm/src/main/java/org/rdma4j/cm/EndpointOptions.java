// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Objects;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.VerbsException;

/**
 * What {@link RdmaServer} and {@link RdmaClient} make their endpoints with: the QP's capabilities,
 * the connection parameters, the bound of each step, the CM's retransmission settings, the source
 * address and the listen backlog. Every setting has a default that makes a working RC connection.
 * Mutable, fluent; not thread safe (an endpoint copies what it needs when it is made).
 */
public final class EndpointOptions {
    private QpCap cap = new QpCap(16, 16, 1, 1, 0);
    private boolean sqSigAll;
    private ConnParam connParam = new ConnParam();
    private Duration timeout = Endpoint.DEFAULT_TIMEOUT;
    private int responseTimeout = CmId.DEFAULT_RESPONSE_TIMEOUT;
    private int maxCmRetries = CmId.DEFAULT_MAX_CM_RETRIES;
    private InetAddress source;
    private int backlog = 128;

    /** The defaults: 16 sends and 16 receives of one SGE each, rdma_cm's connection parameters, 30 s per step. */
    public EndpointOptions() {
    }

    /** {@return a copy of the QP capabilities} */
    public QpCap cap() {
        return cap.copy();
    }

    /** @param cap the QP's capabilities (copied) @return this */
    public EndpointOptions cap(QpCap cap) {
        this.cap = Objects.requireNonNull(cap, "cap").copy();
        return this;
    }

    /** {@return whether every send work request completes (sq_sig_all)} */
    public boolean sqSigAll() {
        return sqSigAll;
    }

    /** @param v sq_sig_all @return this */
    public EndpointOptions sqSigAll(boolean v) {
        this.sqSigAll = v;
        return this;
    }

    /** {@return the connection parameters connect and accept use} */
    public ConnParam connParam() {
        return connParam;
    }

    /** @param p the connection parameters (kept, not copied) @return this */
    public EndpointOptions connParam(ConnParam p) {
        this.connParam = Objects.requireNonNull(p, "connParam");
        return this;
    }

    /** {@return the bound of each synchronous step} */
    public Duration timeout() {
        return timeout;
    }

    /** @param t a positive bound of each step ({@link Endpoint#timeout(Duration)}) @return this */
    public EndpointOptions timeout(Duration t) {
        if (t == null || t.isNegative() || t.isZero()) {
            throw new VerbsException(Errno.EINVAL, "the timeout must be positive");
        }
        this.timeout = t;
        return this;
    }

    /** {@return the CM response timeout exponent ({@link CmId#setResponseTimeout})} */
    public int responseTimeout() {
        return responseTimeout;
    }

    /** @param exponent 0..31 (4.096 us * 2^exponent; rdma_cm: 20) @return this */
    public EndpointOptions responseTimeout(int exponent) {
        if (exponent < 0 || exponent > 31) {
            throw new VerbsException(Errno.EINVAL, "response timeout must be 0..31, got " + exponent);
        }
        this.responseTimeout = exponent;
        return this;
    }

    /** {@return how often a CM message is sent again ({@link CmId#setMaxCmRetries})} */
    public int maxCmRetries() {
        return maxCmRetries;
    }

    /** @param retries 0..15 (rdma_cm: 15) @return this */
    public EndpointOptions maxCmRetries(int retries) {
        if (retries < 0 || retries > 15) {
            throw new VerbsException(Errno.EINVAL, "max CM retries must be 0..15, got " + retries);
        }
        this.maxCmRetries = retries;
        return this;
    }

    /** {@return the client's source address, or null to let the connection manager pick} */
    public InetAddress source() {
        return source;
    }

    /** @param a the client's source address (null: picked) @return this */
    public EndpointOptions source(InetAddress a) {
        this.source = a;
        return this;
    }

    /** {@return the server's listen backlog} */
    public int backlog() {
        return backlog;
    }

    /** @param n requests that may wait to be accepted @return this */
    public EndpointOptions backlog(int n) {
        this.backlog = n;
        return this;
    }

    /** The QP attributes of an endpoint: RC, the capabilities, CQs made by the endpoint. */
    QpInitAttr qpInitAttr() {
        return new QpInitAttr().cap(cap.copy()).sqSigAll(sqSigAll);
    }

    void applyTo(CmId id) {
        id.setResponseTimeout(responseTimeout);
        id.setMaxCmRetries(maxCmRetries);
    }
}
