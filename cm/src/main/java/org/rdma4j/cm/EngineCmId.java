// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QueuePair;

/**
 * The backend of an id the Java CM ({@link CmEngine}) serves. A bind or an address resolution that
 * lands on a device with a connection manager of its own hands the id to it first
 * ({@link ProviderCmId#adoptForBind}, {@link ProviderCmId#adoptForResolve}); a wildcard listener listens
 * on both ({@link ProviderCmId#listenEverywhere}).
 */
final class EngineCmId implements CmBackend {
    static final EngineCmId INSTANCE = new EngineCmId();

    private final CmEngine engine = CmEngine.INSTANCE;

    private EngineCmId() {
    }

    @Override
    public void bindAddr(CmId id, InetSocketAddress addr) {
        if (!ProviderCmId.adoptForBind(id, addr)) {
            engine.bindAddr(id, addr);
        }
    }

    @Override
    public void resolveAddr(CmId id, InetSocketAddress src, InetSocketAddress dst, int timeoutMs) {
        if (!ProviderCmId.adoptForResolve(id, src, dst, timeoutMs)) {
            engine.resolveAddr(id, src, dst, timeoutMs);
        }
    }

    @Override
    public void resolveRoute(CmId id, int timeoutMs) {
        engine.resolveRoute(id, timeoutMs);
    }

    @Override
    public void listen(CmId id, int backlog) {
        ProviderCmId.listenEverywhere(id, backlog);
    }

    @Override
    public QueuePair createQp(CmId id, ProtectionDomain pd, QpInitAttr attr) {
        return engine.createQp(id, pd, attr);
    }

    @Override
    public void destroyQp(CmId id) {
        engine.destroyQp(id);
    }

    @Override
    public void connect(CmId id, ConnParam param) {
        engine.connect(id, param);
    }

    @Override
    public void accept(CmId id, ConnParam param) {
        engine.accept(id, param);
    }

    @Override
    public void reject(CmId id, byte[] privateData) {
        engine.reject(id, privateData);
    }

    @Override
    public QpAttr initQpAttr(CmId id, QpState state) {
        return engine.initQpAttr(id, state);
    }

    @Override
    public void establish(CmId id) {
        engine.establish(id);
    }

    @Override
    public void disconnect(CmId id) {
        engine.disconnect(id);
    }

    @Override
    public void joinMulticast(CmId id, InetAddress group, MulticastJoinFlag flag, Object context) {
        engine.joinMulticast(id, group, flag, context);
    }

    @Override
    public void leaveMulticast(CmId id, InetAddress group) {
        engine.leaveMulticast(id, group);
    }

    @Override
    public void setAckTimeout(CmId id, int exponent) {
        // kept by the engine's setOption already
    }

    @Override
    public Context context(CmId id) {
        return engine.read(() -> id.context);
    }

    @Override
    public int portNum(CmId id) {
        return engine.read(() -> id.portNum);
    }

    @Override
    public QueuePair qp(CmId id) {
        return engine.read(() -> id.qp);
    }

    @Override
    public InetSocketAddress localAddress(CmId id) {
        return engine.read(() -> id.local);
    }

    @Override
    public InetSocketAddress remoteAddress(CmId id) {
        return engine.read(() -> id.remote);
    }

    @Override
    public Gid sourceGid(CmId id) {
        return engine.read(() -> id.sgid);
    }

    @Override
    public Gid destinationGid(CmId id) {
        return engine.read(() -> id.dgid);
    }

    @Override
    public void closed(CmId id) {
        // the engine's destroy let it go
    }

    @Override
    public String describe(CmId id) {
        return "CmId[" + id.ps + ", comm id 0x" + Integer.toHexString(id.conn.localCommId) + "]";
    }
}
