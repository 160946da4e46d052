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
    private SoftDevicePolicy softDevice = SoftDevicePolicy.LOOPBACK;

    /** The defaults: 16 sends and 16 receives of one SGE each, rdma_cm's connection parameters, 30 s per step. */
    public EndpointOptions() {
    }

    /** {@return a copy of the QP capabilities} */
    public QpCap cap() {
        return cap.copy();
    }

    /**
     * Sets the QP's capabilities ({@code ibv_qp_init_attr.cap} of {@code rdma_create_ep}).
     *
     * @param cap the QP's capabilities (copied)
     * @return this
     */
    public EndpointOptions cap(QpCap cap) {
        this.cap = Objects.requireNonNull(cap, "cap").copy();
        return this;
    }

    /** {@return whether every send work request completes (sq_sig_all)} */
    public boolean sqSigAll() {
        return sqSigAll;
    }

    /**
     * Sets {@code sq_sig_all} of the QP: whether every send work request completes, signaled or not.
     *
     * @param v sq_sig_all
     * @return this
     */
    public EndpointOptions sqSigAll(boolean v) {
        this.sqSigAll = v;
        return this;
    }

    /** {@return the connection parameters connect and accept use} */
    public ConnParam connParam() {
        return connParam;
    }

    /**
     * Sets the connection parameters ({@code struct rdma_conn_param}) {@code rdma_connect} and
     * {@code rdma_accept} send.
     *
     * @param p the connection parameters (kept, not copied)
     * @return this
     */
    public EndpointOptions connParam(ConnParam p) {
        this.connParam = Objects.requireNonNull(p, "connParam");
        return this;
    }

    /** {@return the bound of each synchronous step} */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Sets the bound of each synchronous step (resolve, connect, accept, disconnect, a completion wait);
     * librdmacm's synchronous ids have none, a step past it fails with ETIMEDOUT naming it.
     *
     * @param t a positive bound of each step ({@link Endpoint#timeout(Duration)})
     * @return this
     * @throws VerbsException EINVAL when not positive
     */
    public EndpointOptions timeout(Duration t) {
        if (t == null || t.isNegative() || t.isZero()) {
            throw new VerbsException(Errno.EINVAL, "EndpointOptions.timeout: it must be positive, got " + CmWords.duration(t));
        }
        this.timeout = t;
        return this;
    }

    /** {@return the CM response timeout exponent ({@link CmId#setResponseTimeout})} */
    public int responseTimeout() {
        return responseTimeout;
    }

    /**
     * Sets the CM response timeout ({@code CMA_CM_RESPONSE_TIMEOUT}, the REQ's Local CM Response Timeout):
     * how long the CM waits for an answer before it sends a REQ, REP or DREQ again.
     *
     * @param exponent 0..31 (4.096 us * 2^exponent; rdma_cm: 20)
     * @return this
     * @throws VerbsException EINVAL outside 0..31
     */
    public EndpointOptions responseTimeout(int exponent) {
        if (exponent < 0 || exponent > 31) {
            throw new VerbsException(Errno.EINVAL, "EndpointOptions.responseTimeout: 0..31, got " + exponent);
        }
        this.responseTimeout = exponent;
        return this;
    }

    /** {@return how often a CM message is sent again ({@link CmId#setMaxCmRetries})} */
    public int maxCmRetries() {
        return maxCmRetries;
    }

    /**
     * Sets how often a REQ, REP or DREQ is sent again ({@code CMA_MAX_CM_RETRIES}, the REQ's Max CM
     * Retries) before the peer counts as unreachable (UNREACHABLE, ETIMEDOUT).
     *
     * @param retries 0..15 (rdma_cm: 15)
     * @return this
     * @throws VerbsException EINVAL outside 0..15
     */
    public EndpointOptions maxCmRetries(int retries) {
        if (retries < 0 || retries > 15) {
            throw new VerbsException(Errno.EINVAL, "EndpointOptions.maxCmRetries: 0..15, got " + retries);
        }
        this.maxCmRetries = retries;
        return this;
    }

    /** {@return the client's source address, or null to let the connection manager pick} */
    public InetAddress source() {
        return source;
    }

    /**
     * Sets the client's source address ({@code rdma_resolve_addr}'s {@code src_addr}); null lets the host's
     * route to the server pick it, as the kernel does.
     *
     * @param a the client's source address (null: picked)
     * @return this
     */
    public EndpointOptions source(InetAddress a) {
        this.source = a;
        return this;
    }

    /** {@return the server's listen backlog} */
    public int backlog() {
        return backlog;
    }

    /**
     * Sets the server's listen backlog ({@code rdma_listen}'s {@code backlog}): requests beyond it not yet
     * accepted are rejected (REJ, consumer defined).
     *
     * @param n requests that may wait to be accepted (0 or less: 1024)
     * @return this
     */
    public EndpointOptions backlog(int n) {
        this.backlog = n;
        return this;
    }

    /** {@return when a soft device is made for a local address no device has (default {@link SoftDevicePolicy#LOOPBACK})} */
    public SoftDevicePolicy softDevice() {
        return softDevice;
    }

    /**
     * Sets when {@link RdmaServer#listen(java.net.InetSocketAddress, EndpointOptions)} and {@link RdmaClient}
     * make a soft RoCEv2 device for a local address that no RDMA device has (see {@link SoftDevicePolicy}).
     *
     * @param policy {@link SoftDevicePolicy#NEVER}, {@link SoftDevicePolicy#LOOPBACK} (the default) or
     *     {@link SoftDevicePolicy#ANY_ADDRESS}
     * @return this
     */
    public EndpointOptions softDevice(SoftDevicePolicy policy) {
        this.softDevice = Objects.requireNonNull(policy, "policy");
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
