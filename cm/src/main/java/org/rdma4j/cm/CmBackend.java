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
 * What a {@link CmId}'s calls go to: the Java CM over QP1 ({@link EngineCmId}, for every id until a
 * device with a connection manager of its own takes it) or that device's CM ({@link ProviderCmId},
 * librdmacm for the native provider). The id picks one per call ({@link CmId#backend()}); the
 * arguments are checked for null by the id, everything else here, with the errno rdma_cm would set.
 */
interface CmBackend {
    void bindAddr(CmId id, InetSocketAddress addr);

    void resolveAddr(CmId id, InetSocketAddress src, InetSocketAddress dst, int timeoutMs);

    void resolveRoute(CmId id, int timeoutMs);

    void listen(CmId id, int backlog);

    QueuePair createQp(CmId id, ProtectionDomain pd, QpInitAttr attr);

    void destroyQp(CmId id);

    void connect(CmId id, ConnParam param);

    void accept(CmId id, ConnParam param);

    /** rdma_reject with {@code privateData} (a copy, never null). */
    void reject(CmId id, byte[] privateData);

    QpAttr initQpAttr(CmId id, QpState state);

    void establish(CmId id);

    void disconnect(CmId id);

    void joinMulticast(CmId id, InetAddress group, MulticastJoinFlag flag, Object context);

    void leaveMulticast(CmId id, InetAddress group);

    /** The ACK timeout option, after the engine has checked and kept it. */
    void setAckTimeout(CmId id, int exponent);

    Context context(CmId id);

    int portNum(CmId id);

    QueuePair qp(CmId id);

    InetSocketAddress localAddress(CmId id);

    InetSocketAddress remoteAddress(CmId id);

    Gid sourceGid(CmId id);

    Gid destinationGid(CmId id);

    /** rdma_destroy_id, after the engine has let the id go. */
    void closed(CmId id);

    /** {@return the id's toString} */
    String describe(CmId id);
}
