// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.CmProvider;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * A {@link CmId} whose device has a connection manager of its own ({@link CmProvider.CmAccess}, e.g.
 * librdmacm for the native provider) instead of QP1 for {@link CmEngine}: the id's calls go to the
 * provider's id, and the provider's events are posted, one to one, on the id's channel. Chosen when a
 * bind or an address resolution of an unbound id lands on such a device; from then on the id never
 * touches the engine's tables. Thread safe (the provider's id is).
 */
final class ProviderCmId implements CmBackend, CmProvider.Listener {
    private final CmId owner;
    private volatile CmProvider.Id id;
    private volatile QueuePair qp;
    /** Adopted for an iWARP device without a GID match ({@link DeviceMatch#iwarp}): its CM decides. */
    private boolean guessed;

    private ProviderCmId(CmId owner) {
        this.owner = owner;
    }

    CmProvider.Id providerId() {
        return id;
    }

    /**
     * Binds through the provider when the id already uses one, or when it is unbound and {@code addr}
     * is an address of a device with a connection manager of its own; false (nothing done) otherwise.
     */
    static boolean adoptForBind(CmId owner, InetSocketAddress addr) {
        ProviderCmId p = owner.provider;
        boolean adopted = false;
        if (p == null) {
            if (addr.isUnresolved() || DeviceMatch.isWildcard(addr.getAddress())) {
                return false;
            }
            p = adopt(owner, addr.getAddress(), null);
            if (p == null) {
                return false;
            }
            adopted = true;
        }
        try {
            p.id.bindAddr(addr);
        } catch (RuntimeException e) {
            if (adopted) {
                p.abandon();
                if (p.guessed) {
                    return false; // the address is on no iWARP device either: the engine's answer
                }
            }
            throw e;
        }
        return true;
    }

    /** As {@link #adoptForBind}, for rdma_resolve_addr: the device is the one that reaches {@code dst} (from src). */
    static boolean adoptForResolve(CmId owner, InetSocketAddress src, InetSocketAddress dst, int timeoutMs) {
        ProviderCmId p = owner.provider;
        boolean adopted = false;
        if (p == null) {
            if (dst.isUnresolved() || timeoutMs < 0 || src != null && src.isUnresolved()) {
                return false; // the engine says EINVAL
            }
            InetAddress from = src == null || DeviceMatch.isWildcard(src.getAddress()) ? null : src.getAddress();
            p = adopt(owner, from, dst.getAddress());
            if (p == null) {
                return false;
            }
            adopted = true;
        }
        try {
            p.id.resolveAddr(src, dst, timeoutMs);
        } catch (RuntimeException e) {
            if (adopted) {
                p.abandon();
                if (p.guessed) {
                    return false;
                }
            }
            throw e;
        }
        return true;
    }

    /**
     * Makes {@code owner} use the provider's CM when it is a fresh RC id and the device for these
     * addresses offers one (and no QP1); null otherwise, also when that CM cannot be used (librdmacm
     * missing): the engine then reports the device as one it cannot serve (EOPNOTSUPP).
     */
    private static ProviderCmId adopt(CmId owner, InetAddress src, InetAddress dst) {
        if (owner.ps != PortSpace.TCP && owner.ps != PortSpace.UDP) {
            return null;
        }
        CmEngine engine = CmEngine.INSTANCE;
        if (engine.read(() -> owner.state != CmId.State.IDLE || owner.userClosed)) {
            return null; // the engine's checks give the errno
        }
        // with no source, the device is the one with the source address of the host's route (or dst)
        DeviceMatch m = src != null ? DeviceMatch.find(engine, src, dst) : SourceRoute.choose(engine, dst).match();
        // An iWARP device's GIDs are MAC addresses, not IP addresses, so no GID places an address on it;
        // its own CM (librdmacm: the kernel's routing, the address's net device) does. Unless a GID is
        // the address (the source or the destination; a wildcard destination's device is a guess, and
        // may be an iWARP device's), such a device's CM gets the call: if the address is not its, the
        // bind fails and the engine answers instead.
        boolean exact = m != null && (src != null || !DeviceMatch.isWildcard(dst) || m.gid().equals(Gid.of(dst)));
        Device iwarp = exact ? null : DeviceMatch.iwarp(engine);
        Device device = iwarp != null ? iwarp : m != null ? m.device() : null;
        if (device == null) {
            return null;
        }
        CmProvider provider;
        Context ctx;
        try {
            ctx = engine.devices.acquireContext(device);
        } catch (RuntimeException e) {
            return null;
        }
        try {
            if (ctx instanceof GsiPort.GsiAccess || !(ctx instanceof CmProvider.CmAccess access)) {
                return null;
            }
            provider = access.cmProvider();
        } catch (VerbsException e) {
            return null; // its CM cannot be used: the engine reports the device as one it cannot serve
        } finally {
            engine.devices.releaseContext(device.name());
        }
        ProviderCmId p = attach(owner, provider);
        if (p != null) {
            p.guessed = iwarp != null;
        }
        return p;
    }

    /** Makes a fresh {@code owner} use {@code provider}'s CM; null when the id is no longer fresh. */
    static ProviderCmId attach(CmId owner, CmProvider provider) {
        CmEngine engine = CmEngine.INSTANCE;
        ProviderCmId p = new ProviderCmId(owner);
        p.id = provider.createId(owner.ps.value(), p);
        int ackTimeout = engine.read(() -> owner.ackTimeout);
        boolean won = engine.read(() -> {
            if (owner.provider != null || owner.state != CmId.State.IDLE || owner.userClosed) {
                return false;
            }
            owner.provider = p;
            return true;
        });
        if (!won) {
            p.id.close();
            return null;
        }
        if (ackTimeout != CmId.DEFAULT_ACK_TIMEOUT) {
            p.id.setAckTimeout(ackTimeout);
        }
        return p;
    }

    /** Undoes {@link #adopt} after the first call failed: the id is a fresh engine id again. */
    private void abandon() {
        CmEngine.INSTANCE.read(() -> {
            if (owner.provider == this) {
                owner.provider = null;
            }
            return null;
        });
        id.close();
    }

    @Override
    public void listen(CmId owner, int backlog) {
        id.listen(backlog <= 0 ? 1024 : backlog);
    }

    /**
     * rdma_listen on an id the engine has (an unbound or wildcard-bound one): the engine listens on the
     * devices with QP1, and when a device has a connection manager of its own, a provider id bound to
     * the same wildcard address and port listens there too; requests from either come as
     * CONNECT_REQUEST on the id's channel. ENODEV only when neither can listen.
     */
    static void listenEverywhere(CmId owner, int backlog) {
        CmEngine engine = CmEngine.INSTANCE;
        VerbsException engineFailure = null;
        try {
            engine.listen(owner, backlog);
        } catch (VerbsException e) {
            if (e.errno() != Errno.ENODEV) {
                throw e;
            }
            engineFailure = e; // no device with QP1: perhaps one with its own CM
        }
        InetSocketAddress local = engine.read(() -> owner.local);
        CmProvider provider = owner.ps != PortSpace.TCP || local == null
                || !DeviceMatch.isWildcard(local.getAddress()) ? null : anyProvider(engine);
        if (provider == null) {
            if (engineFailure != null) {
                throw engineFailure;
            }
            return;
        }
        ProviderCmId p = new ProviderCmId(owner);
        p.id = provider.createId(owner.ps.value(), p);
        try {
            p.id.bindAddr(local);
            p.listen(owner, backlog);
        } catch (RuntimeException e) {
            p.id.close();
            throw e;
        }
        boolean won = engine.read(() -> {
            if (owner.provider != null || owner.userClosed) {
                return false;
            }
            owner.provider = p;
            return true;
        });
        if (!won) {
            p.id.close();
        }
    }

    /** The connection manager of the first device that has one of its own (and no QP1), or null. */
    private static CmProvider anyProvider(CmEngine engine) {
        for (org.rdma4j.verbs.Device d : org.rdma4j.verbs.Verbs.devices()) {
            Context ctx;
            try {
                ctx = engine.devices.acquireContext(d);
            } catch (RuntimeException e) {
                continue;
            }
            try {
                if (!(ctx instanceof GsiPort.GsiAccess) && ctx instanceof CmProvider.CmAccess access) {
                    return access.cmProvider();
                }
            } catch (VerbsException e) {
                // its CM cannot be used (librdmacm missing): it cannot take connections
            } finally {
                engine.devices.releaseContext(d.name());
            }
        }
        return null;
    }

    @Override
    public QueuePair createQp(CmId owner, ProtectionDomain pd, QpInitAttr attr) {
        if (attr.type != owner.ps.qpType()) {
            throw CmWords.error(Errno.EINVAL, "create QP for", owner.remoteAddress(), owner.localAddress(), owner.ps
                    + " ids take " + owner.ps.qpType() + " QPs, not " + attr.type);
        }
        QueuePair q = id.createQp(pd, attr);
        qp = q;
        return q;
    }

    @Override
    public void destroyQp(CmId owner) {
        id.destroyQp();
        qp = null;
    }

    @Override
    public QueuePair qp(CmId owner) {
        QueuePair q = qp;
        return q == null || q.isClosed() ? null : q;
    }

    @Override
    public void connect(CmId owner, ConnParam p) {
        p.checkPrivateData(ConnParam.MAX_REQ_PRIVATE_DATA, CmWords.where("connect to", owner.remoteAddress(), owner.localAddress()));
        id.connect(param(p));
    }

    @Override
    public void accept(CmId owner, ConnParam p) {
        p.checkPrivateData(ConnParam.MAX_REP_PRIVATE_DATA, CmWords.where("accept from", owner.remoteAddress(), owner.localAddress()));
        id.accept(param(p));
    }

    @Override
    public void reject(CmId owner, byte[] privateData) {
        if (privateData.length > ConnParam.MAX_REJ_PRIVATE_DATA) {
            throw CmWords.error(Errno.EINVAL, "reject", owner.remoteAddress(), owner.localAddress(), "a REJ carries at most " + ConnParam.MAX_REJ_PRIVATE_DATA
                    + " bytes of private data, got " + privateData.length);
        }
        id.reject(privateData);
    }

    void close() {
        id.close();
    }

    @Override
    public void bindAddr(CmId owner, InetSocketAddress addr) {
        id.bindAddr(addr);
    }

    @Override
    public void resolveAddr(CmId owner, InetSocketAddress src, InetSocketAddress dst, int timeoutMs) {
        id.resolveAddr(src, dst, timeoutMs);
    }

    @Override
    public void resolveRoute(CmId owner, int timeoutMs) {
        id.resolveRoute(timeoutMs);
    }

    @Override
    public QpAttr initQpAttr(CmId owner, QpState state) {
        return id.initQpAttr(state);
    }

    @Override
    public void establish(CmId owner) {
        id.establish();
    }

    @Override
    public void disconnect(CmId owner) {
        id.disconnect();
    }

    @Override
    public void leaveMulticast(CmId owner, InetAddress group) {
        id.leaveMulticast(group);
    }

    @Override
    public void setAckTimeout(CmId owner, int exponent) {
        id.setAckTimeout(exponent);
    }

    @Override
    public Context context(CmId owner) {
        return id.context();
    }

    @Override
    public int portNum(CmId owner) {
        return id.portNum();
    }

    @Override
    public InetSocketAddress localAddress(CmId owner) {
        return id.localAddress();
    }

    @Override
    public InetSocketAddress remoteAddress(CmId owner) {
        return id.remoteAddress();
    }

    @Override
    public Gid sourceGid(CmId owner) {
        return id.sourceGid();
    }

    @Override
    public Gid destinationGid(CmId owner) {
        return id.destinationGid();
    }

    @Override
    public void closed(CmId owner) {
        close();
    }

    @Override
    public String describe(CmId owner) {
        return "CmId[" + owner.ps + ", " + id + "]";
    }

    @Override
    public void joinMulticast(CmId owner, InetAddress group, MulticastJoinFlag flag, Object context) {
        if (!group.isMulticastAddress()) {
            throw new VerbsException(Errno.EINVAL, "join multicast group " + group.getHostAddress() + ": not a multicast address");
        }
        if (owner.ps != PortSpace.UDP) {
            throw new VerbsException(Errno.EINVAL, "join multicast group: only UD ids (RDMA_PS_UDP) join, this one is "
                    + owner.ps);
        }
        id.joinMulticast(group, flag == MulticastJoinFlag.SEND_ONLY_FULL_MEMBER, context);
    }

    private static CmProvider.Param param(ConnParam p) {
        return new CmProvider.Param(p.rawPrivateData(), p.responderResources(), p.initiatorDepth(),
                p.flowControl() ? 1 : 0, p.retryCount(), p.rnrRetryCount(), p.srq() ? 1 : 0, p.qpNum());
    }

    private static ConnParam connParam(CmProvider.Param p) {
        return new ConnParam().privateData(p.privateData()).responderResources(p.responderResources() & 0xFF)
                .initiatorDepth(p.initiatorDepth() & 0xFF).flowControl(p.flowControl() != 0)
                .retryCount(p.retryCount() & 7).rnrRetryCount(p.rnrRetryCount() & 7).srq(p.srq() != 0)
                .qpNum(p.qpNum());
    }

    /** A provider event: the same event on the id's channel (for CONNECT_REQUEST with a new id). */
    @Override
    public void onEvent(CmProvider.Event e) {
        CmEventType[] types = CmEventType.values();
        if (e.type() < 0 || e.type() >= types.length) {
            return; // a type rdma_cm added after this enum: nobody could act on it
        }
        CmEventType type = types[e.type()];
        CmId about = owner;
        CmId listenId = null;
        if (type == CmEventType.CONNECT_REQUEST) {
            CmId child = CmId.child(owner);
            ProviderCmId pc = new ProviderCmId(child);
            pc.id = e.id();
            child.provider = pc;
            e.id().listener(pc);
            about = child;
            listenId = owner;
        }
        CmId subject = about;
        CmId listening = listenId;
        CmProvider.Ud ud = e.ud();
        ConnParam cp = e.param() == null ? null : connParam(e.param());
        if (ud != null && cp == null) {
            cp = new ConnParam().qpNum(ud.qpNum() & 0xFF_FFFF);
        }
        ConnParam param = cp;
        if (listenId != null) {
            CmEngine.INSTANCE.read(() -> owner.pendingRequests++); // getEvent counts it down
        }
        // posted under the engine's lock: a migrate (which moves queued events) cannot run in between
        boolean posted = !owner.isClosed() && CmEngine.INSTANCE.read(() -> owner.channel.post(ud == null
                ? new CmEvent(owner.channel, type, e.status(), subject, listening, e.privateData(), param)
                : new CmEvent(owner.channel, type, e.status(), subject, listening, e.privateData(), param,
                        ud.ahAttr(), ud.qkey(), ud.context())));
        if (!posted) {
            if (listenId != null) {
                CmEngine.INSTANCE.connectRequestTaken(owner);
                about.provider.close(); // nobody can take it: the peer sees a reject
            }
        }
    }
}
