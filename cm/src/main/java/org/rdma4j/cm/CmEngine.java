// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.rdma4j.cm.CmQpAttrs.qpToError;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.rdma4j.cm.CmId.State;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.cm.wire.SidrRep;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * The Java connection manager behind every {@link CmId} its own CM does not serve, as cma.c sits over
 * cm.c: rdma_cm's calls (bind, resolve, listen, connect, accept, reject, disconnect, destroy, ...) with
 * their checks, the events they post, and what a lost port does to its ids. Beside it, one job each:
 * {@link CmPorts} (ids by port space and port, the listener lookup), {@link CmDevices} (shared device
 * contexts and the per-port {@link CmAgent}s), {@link CmProtocol} (the IB CM protocol, IBTA vol. 1
 * ch. 12, as cm.c runs it), {@link CmSidr} (SIDR), {@link CmMad} (send window, retries, timers, as
 * mad.c), {@link CmMessageAuth} (which connection, if any, a received message may change). One lock
 * guards all of it: API calls and the agents' receive threads take it, and nothing under it blocks
 * (sends are UD datagrams, QP modifies are local). Lock order: engine, then an event channel's lock.
 */
final class CmEngine {
    static final CmEngine INSTANCE = new CmEngine();

    private static final int DEFAULT_BACKLOG = 1024;

    final ReentrantLock lock = new ReentrantLock();
    volatile GsiOpener opener = GsiOpener.PROVIDER;

    /** Finds the connection a received message speaks for, and drops and counts the rest. */
    final CmMessageAuth auth = new CmMessageAuth();
    /** The ids by port space and port (cma.c's bind lists). */
    final CmPorts ports = new CmPorts();
    /** The device contexts and per-port agents the ids share. */
    final CmDevices devices = new CmDevices(this);

    /** The IB CM protocol: its messages, their handlers and timeouts (cm.c). */
    private final CmProtocol cm = new CmProtocol(this);
    /** Service id resolution for UD ids (SIDR, cm.c's sidr handlers). */
    final CmSidr sidr = new CmSidr(this);

    private CmEngine() {
    }

    <T> T read(Supplier<T> s) {
        lock.lock();
        try {
            return s.get();
        } finally {
            lock.unlock();
        }
    }

    /** {@return how many connections the protocol tables hold (a test checks that none leak)} */
    int connectionCount() {
        return read(auth::size);
    }

    // ---------------------------------------------------------------- the API

    /**
     * The opening every rdma_cm call on {@code id} shares: the engine's lock, EBADF once the id is closed
     * ({@link CmWords#closed}), and, with {@code in}, EINVAL unless the id is in one of those states
     * ({@link CmWords#wrongState}); then {@code body}, under the lock.
     */
    private <T> T call(CmId id, String step, EnumSet<State> in, Supplier<T> body) {
        lock.lock();
        try {
            if (id.userClosed) {
                throw CmWords.closed(id, step);
            }
            if (in != null && !in.contains(id.state)) {
                throw CmWords.wrongState(id, step);
            }
            return body.get();
        } finally {
            lock.unlock();
        }
    }

    /** As {@link #call}, for a call that returns nothing. */
    private void run(CmId id, String step, EnumSet<State> in, Runnable body) {
        call(id, step, in, () -> {
            body.run();
            return null;
        });
    }

    /** {@code body} under the engine's lock (a call with no opening checks: safe once closed too). */
    private void run(Runnable body) {
        read(() -> {
            body.run();
            return null;
        });
    }

    private static VerbsException wrongState(CmId id, String step) {
        return CmWords.wrongState(id, step);
    }

    void setOption(CmId id, int which, int value, int max) {
        if (value < 0 || value > max) {
            throw CmWords.error(Errno.EINVAL, "set an option of", id, "the value must be 0.." + max + ", got " + value);
        }
        run(id, "set an option of", null, () -> {
            switch (which) {
                case 0 -> id.responseTimeout = value;
                case 1 -> id.maxCmRetries = value;
                case 2 -> id.ackTimeout = value;
                default -> id.minRnrTimer = value;
            }
        });
    }

    void bindAddr(CmId id, InetSocketAddress addr) {
        run(id, "bind to", EnumSet.of(State.IDLE), () -> {
            InetAddress a = addr.getAddress();
            if (addr.isUnresolved() || a == null) {
                throw CmWords.error(Errno.EINVAL, "bind to", null, addr, "the address is unresolved");
            }
            DeviceMatch m = null;
            if (!DeviceMatch.isWildcard(a)) {
                m = DeviceMatch.find(this, a, null);
                if (m == null) {
                    throw CmWords.noDevice("bind to", addr);
                }
            }
            ports.bind(id, a, addr.getPort());
            if (m != null) {
                try {
                    devices.attach(id, m);
                } catch (RuntimeException e) {
                    ports.unbind(id);
                    throw e instanceof VerbsException v ? CmWords.naming(v, "bind to", addr) : e;
                }
            }
            id.state = State.ADDR_BOUND;
        });
    }

    void resolveAddr(CmId id, InetSocketAddress src, InetSocketAddress dst, int timeoutMs) {
        run(id, "resolve address of", null, () -> {
            if (dst.isUnresolved() || timeoutMs < 0) {
                throw CmWords.error(Errno.EINVAL, "resolve address of", dst, null, "unresolved, or timeout < 0: " + timeoutMs);
            }
            if (id.state == State.IDLE && src != null) {
                bindAddr(id, src);
            }
            if (id.state != State.IDLE && id.state != State.ADDR_BOUND && id.state != State.ADDR_RESOLVED) {
                throw wrongState(id, "resolve address of");
            }
            InetAddress to = dst.getAddress();
            if (id.agent == null) {
                SourceRoute r = SourceRoute.choose(this, id.local, to); // the kernel's route picks a missing source
                DeviceMatch m = r.match();
                if (m == null) {
                    r.postError(id);
                    return;
                }
                try {
                    devices.attach(id, m);
                } catch (VerbsException e) {
                    new SourceRoute(null, e.errno(), "the device of the route cannot carry it: " + e.getMessage()).postError(id);
                    return;
                }
            } else if (id.sgid.isIpv4Mapped() != Gid.of(to).isIpv4Mapped()) {
                new SourceRoute(null, Errno.EINVAL, "the bound source and " + to.getHostAddress() + " differ in IP version").postError(id);
                return;
            }
            if (!id.ownsPortBinding) {
                ports.bind(id, id.sgid.toInetAddress(), 0);
            } else if (DeviceMatch.isWildcard(id.local.getAddress())) {
                id.local = new InetSocketAddress(id.sgid.toInetAddress(), id.local.getPort());
            }
            id.remote = dst;
            id.dgid = Gid.of(to);
            id.state = State.ADDR_RESOLVED;
            post(id, CmEventType.ADDR_RESOLVED, 0, null, null, null);
        });
    }

    void resolveRoute(CmId id, int timeoutMs) {
        run(id, "resolve route to", EnumSet.of(State.ADDR_RESOLVED, State.ROUTE_RESOLVED), () -> {
            // RoCE: the path is the GID pair; the port must still be up
            if (id.context.queryPort(id.portNum).state() != org.rdma4j.verbs.PortState.ACTIVE) {
                post(id, CmEventType.ROUTE_ERROR, -Errno.ENODEV, null, null, null);
                return;
            }
            id.state = State.ROUTE_RESOLVED;
            post(id, CmEventType.ROUTE_RESOLVED, 0, null, null, null);
        });
    }

    void listen(CmId id, int backlog) {
        run(id, "listen on", null, () -> {
            if (id.state == State.IDLE) {
                ports.bind(id, new InetSocketAddress(0).getAddress(), 0);
                id.state = State.ADDR_BOUND;
            }
            if (id.state != State.ADDR_BOUND) {
                throw wrongState(id, "listen on");
            }
            if (id.agent == null) {
                List<CmAgent> opened = new ArrayList<>();
                for (DeviceMatch m : DeviceMatch.all(this)) {
                    try {
                        CmAgent a = devices.acquireAgent(m.device(), m.portNum(), m.gidIndex());
                        a.members.add(id);
                        opened.add(a);
                    } catch (RuntimeException e) {
                        // a device without QP1 access cannot take connections; the others can
                    }
                }
                if (opened.isEmpty()) {
                    throw CmWords.error(Errno.ENODEV, "listen on", id, "no RDMA device offers the IB CM (QP1) to listen on");
                }
                id.listenAgents = opened;
            }
            id.backlog = backlog <= 0 ? DEFAULT_BACKLOG : backlog;
            id.state = State.LISTEN;
        });
    }

    QueuePair createQp(CmId id, ProtectionDomain pd, QpInitAttr attr) {
        return call(id, "create QP for", null, () -> {
            if (id.context == null || id.state == State.LISTEN) {
                throw CmWords.error(Errno.EINVAL, "create QP for", id, "the id is not bound to a device yet (resolve it first)");
            }
            if (id.qp != null) {
                throw CmWords.error(Errno.EINVAL, "create QP for", id, "the id has a QP already");
            }
            if (!pd.context().device().name().equals(id.deviceName)) {
                throw CmWords.error(Errno.EINVAL, "create QP for", id, "the PD is on " + pd.context().device().name()
                        + ", the id on " + id.deviceName);
            }
            if (attr.type != id.ps.qpType()) {
                throw CmWords.error(Errno.EINVAL, "create QP for", id, id.ps + " ids take " + id.ps.qpType() + " QPs, not " + attr.type);
            }
            QueuePair qp = pd.createQp(attr);
            try {
                if (id.ps == PortSpace.UDP) {
                    // as rdma_create_qp: a UD QP is ready to send at once, with rdma_cm's Q_Key
                    qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(id.portNum).qkey(CmId.UDP_QKEY));
                    qp.modify(new QpAttr().state(QpState.RTR));
                    qp.modify(new QpAttr().state(QpState.RTS).sqPsn(ThreadLocalRandom.current().nextInt() & 0xFFFFFF));
                } else {
                    qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(id.portNum).accessFlags(0));
                }
            } catch (RuntimeException e) {
                qp.close();
                throw e;
            }
            id.qp = qp;
            return qp;
        });
    }

    void joinMulticast(CmId id, InetAddress group, MulticastJoinFlag flag, Object context) {
        run(() -> {
            CmMulticast.join(this, id, group, flag, context);
        });
    }

    void leaveMulticast(CmId id, InetAddress group) {
        run(() -> {
            CmMulticast.leave(id, group);
        });
    }

    void destroyQp(CmId id) {
        run(() -> {
            CmMulticast.leaveAll(id); // an attached QP cannot be destroyed
            QueuePair qp = id.qp;
            if (qp != null) {
                qp.close();
                id.qp = null;
            }
        });
    }

    void connect(CmId id, ConnParam p) {
        run(id, "connect to", EnumSet.of(State.ROUTE_RESOLVED), () -> {
            if (id.ps == PortSpace.UDP) {
                sidr.connect(id, p);
                return;
            }
            p.checkPrivateData(ConnParam.MAX_REQ_PRIVATE_DATA, CmWords.where("connect to", id.remote, id.local));
            int qpn = id.qp != null ? id.qp.qpn() : p.qpNum();
            if (qpn == 0) {
                throw CmWords.error(Errno.EINVAL, "connect to", id, "needs the id's QP or ConnParam.qpNum");
            }
            cm.sendReq(id, p, qpn);
        });
    }

    void accept(CmId id, ConnParam p) {
        run(id, "accept from", EnumSet.of(State.REQ_RCVD), () -> {
            if (id.ps == PortSpace.UDP) {
                p.checkPrivateData(ConnParam.MAX_SIDR_REP_PRIVATE_DATA, CmWords.where("accept (UD) from", id.remote, id.local));
                int qpn = id.qp != null ? id.qp.qpn() : p.qpNum();
                if (qpn == 0) {
                    throw CmWords.error(Errno.EINVAL, "accept from", id, "needs the id's QP or ConnParam.qpNum");
                }
                sidr.sendRep(id, SidrRep.STATUS_SUCCESS, p.rawPrivateData(), qpn);
                id.state = State.ESTABLISHED;
                return;
            }
            p.checkPrivateData(ConnParam.MAX_REP_PRIVATE_DATA, CmWords.where("accept from", id.remote, id.local));
            int qpn = id.qp != null ? id.qp.qpn() : p.qpNum();
            if (qpn == 0) {
                throw CmWords.error(Errno.EINVAL, "accept from", id, "needs the id's QP or ConnParam.qpNum");
            }
            cm.sendRep(id, p, qpn);
        });
    }

    void reject(CmId id, byte[] pd) {
        run(id, "reject", EnumSet.of(State.REQ_RCVD), () -> {
            if (pd.length > ConnParam.MAX_REJ_PRIVATE_DATA) {
                throw CmWords.error(Errno.EINVAL, "reject", id, "a REJ carries at most " + ConnParam.MAX_REJ_PRIVATE_DATA
                        + " bytes of private data, got " + pd.length);
            }
            if (id.ps == PortSpace.UDP) {
                if (pd.length > ConnParam.MAX_SIDR_REP_PRIVATE_DATA) {
                    throw CmWords.error(Errno.EINVAL, "reject", id, "a UD reject carries at most "
                            + ConnParam.MAX_SIDR_REP_PRIVATE_DATA + " bytes of private data");
                }
                sidr.sendRep(id, SidrRep.STATUS_REJECT, pd, 0);
                id.state = State.DONE; // stays indexed: a repeated SIDR_REQ gets the same answer
                return;
            }
            cm.sendRej(id, CmRej.REASON_CONSUMER_DEFINED, CmRej.MSG_REQ, pd);
            id.state = State.DONE;
            unindex(id);
        });
    }

    void establish(CmId id) {
        run(id, "establish with", EnumSet.of(State.REP_RCVD), () -> {
            cm.sendRtu(id);
            id.state = State.ESTABLISHED;
        });
    }

    void disconnect(CmId id) {
        run(id, "disconnect from", null, () -> {
            if (id.ps == PortSpace.UDP) {
                return; // a UD id has no connection to take down
            }
            switch (id.state) {
                case ESTABLISHED, REP_SENT, REP_RCVD -> cm.startDisconnect(id);
                case DREQ_RCVD -> cm.answerDreq(id, true);
                case DREQ_SENT, TIMEWAIT, DONE -> {
                    // already disconnected or disconnecting
                }
                default -> throw wrongState(id, "disconnect from");
            }
        });
    }

    void destroy(CmId id) {
        run(() -> {
            if (id.userClosed) {
                return;
            }
            CmMulticast.leaveAll(id);
            id.userClosed = true;
            cm.destroying(id);
            // nothing lingers: a destroyed id holds no device, whatever state it ended in (a late DREQ
            // for it is answered as for an unknown id)
            id.state = State.DESTROYED;
            unindex(id);
            release(id);
        });
    }

    void migrate(CmId id, CmEventChannel to) {
        run(id, "migrate", null, () -> {
            if (to.isClosed()) {
                throw CmWords.error(Errno.EBADF, "migrate", id, "the event channel to migrate to is closed");
            }
            CmEventChannel from = id.channel;
            if (from == to) {
                return;
            }
            id.channel = to; // provider events post under this lock too: none slips past the move
            from.moveEventsOf(id, to);
        });
    }

    void connectRequestTaken(CmId listener) {
        if (listener == null) {
            return;
        }
        run(() -> {
            listener.pendingRequests--;
        });
    }

    // ---------------------------------------------------------------- state machine helpers

    /**
     * rdma_init_qp_attr: the attributes that move a QP the program created itself (not through
     * {@link #createQp}) to {@code state} for this id, as ib_cm_init_qp_attr gives them: INIT any time the
     * id is on a device (RC: with the remote access once a connection is being set up, else none; UD: the
     * Q_Key); RTR and RTS of an RC id once the connection's values are known (a CONNECT_REQUEST's id, or an
     * active id after CONNECT_RESPONSE or later). EINVAL in any other state.
     */
    QpAttr initQpAttr(CmId id, QpState state) {
        return call(id, "init QP attributes for", null, () -> {
            if (id.context == null || id.state == State.LISTEN) {
                throw CmWords.error(Errno.EINVAL, "init QP attributes for", id, "the id is not bound to a device yet (resolve it first)");
            }
            return CmQpAttrs.initQpAttr(id, state);
        });
    }

    void post(CmId id, CmEventType type, int status, CmId listenId, byte[] pd, ConnParam param) {
        if (id.userClosed) {
            return;
        }
        id.channel.post(new CmEvent(id.channel, type, status, id, listenId, pd, param));
    }

    /** Takes an id out of the protocol tables (no more MADs or timers reach it). */
    void unindex(CmId id) {
        CmMad.cancelTimer(id);
        auth.unindex(id);
    }

    /** Gives back what a closed id held: its port, agents and device context. */
    private void release(CmId id) {
        ports.unbind(id);
        if (id.agent != null) {
            id.agent.members.remove(id);
            devices.releaseAgent(id.agent);
            id.agent = null;
        }
        for (CmAgent a : id.listenAgents) {
            a.members.remove(id);
            devices.releaseAgent(a);
        }
        id.listenAgents = List.of();
        if (id.deviceName != null) {
            devices.releaseContext(id.deviceName);
            id.deviceName = null;
        }
    }

    /** A connection that ended on its own (rejected, unreachable, time wait over). */
    void ended(CmId id) {
        unindex(id);
        if (id.userClosed) {
            id.state = State.DESTROYED;
            release(id);
        } else {
            id.state = State.DONE;
        }
    }

    // ---------------------------------------------------------------- the agents' side

    /**
     * The agent's GsiPort was closed under it (the device was removed): every id on the port gets
     * DEVICE_REMOVAL (its QP moved to ERROR, so its work flushes) and waits for the program to close it;
     * ids already closed by the program are let go. Nothing is left waiting for MADs that cannot come.
     */
    void agentLost(CmAgent a) {
        lock.lock();
        try {
            if (a.closing) {
                return;
            }
            a.closing = true;
            if (devices.agents.remove(a.key, a)) {
                devices.releaseContext(a.deviceName);
            }
            for (CmId id : new ArrayList<>(a.members)) {
                if (id.agent == null && id.listenAgents.contains(a)) {
                    // a wildcard listener loses one device and keeps listening on the others
                    List<CmAgent> rest = new ArrayList<>(id.listenAgents);
                    rest.remove(a);
                    id.listenAgents = rest;
                    a.members.remove(id);
                    a.refs--;
                    continue;
                }
                unindex(id);
                if (id.userClosed) {
                    id.state = State.DESTROYED;
                    release(id);
                    continue;
                }
                qpToError(id);
                if (id.state != State.DONE) {
                    post(id, CmEventType.DEVICE_REMOVAL, 0, null, null, null);
                }
                id.state = State.DONE;
            }
        } finally {
            lock.unlock();
        }
    }

    long timerWait(CmAgent a, long maxNs) {
        lock.lock();
        try {
            return CmMad.timerWait(a, maxNs);
        } finally {
            lock.unlock();
        }
    }

    void agentTurn(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        lock.lock();
        try {
            if (a.closing) {
                return;
            }
            if (mad != null) {
                // everything queued is taken in this one turn of the lock (at most BATCH): the queue
                // drains as fast as the engine can dispatch, not one lock hand-over per MAD
                int n = 0;
                do {
                    try {
                        cm.dispatch(a, mad, from);
                    } catch (RuntimeException e) {
                        a.malformed++; // whatever a MAD does, it must not take the agent down
                    }
                } while (++n < CmAgent.BATCH && a.receiveNow());
                a.turns++;
                a.taken += n;
            }
            CmMad.fireDue(a, cm.timeout);
        } finally {
            lock.unlock();
        }
    }

}
