// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.rdma4j.cm.CmQpAttrs.ahAttr;
import static org.rdma4j.cm.CmQpAttrs.moveToRts;
import static org.rdma4j.cm.CmQpAttrs.qpToError;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.rdma4j.cm.CmId.State;
import org.rdma4j.cm.wire.CmDrep;
import org.rdma4j.cm.wire.CmDreq;
import org.rdma4j.cm.wire.CmMra;
import org.rdma4j.cm.wire.CmRej;
import org.rdma4j.cm.wire.CmRep;
import org.rdma4j.cm.wire.CmReq;
import org.rdma4j.cm.wire.CmRtu;
import org.rdma4j.cm.wire.CmaHeader;
import org.rdma4j.cm.wire.MadCheck;
import org.rdma4j.cm.wire.MadHeader;
import org.rdma4j.cm.wire.ServiceId;
import org.rdma4j.cm.wire.SidrRep;
import org.rdma4j.cm.wire.SidrReq;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * The IB CM protocol engine behind every {@link CmId}: the active and passive connection state machines
 * (IBTA vol. 1 ch. 12, as the kernel's cm.c runs them), the listener table, the per-port
 * {@link CmAgent}s and the shared device contexts; {@link CmMessageAuth} decides which connection, if
 * any, a received message may change. One lock guards all of it: API calls and the agents'
 * receive threads take it, and nothing under it blocks (sends are UD datagrams, QP modifies are local).
 * Lock order: engine, then an event channel's lock.
 */
final class CmEngine {
    static final CmEngine INSTANCE = new CmEngine();

    private static final int DEFAULT_BACKLOG = 1024;

    private static final class DeviceRef {
        final Context ctx;
        int refs;

        DeviceRef(Context ctx) {
            this.ctx = ctx;
        }
    }

    final ReentrantLock lock = new ReentrantLock();
    volatile GsiOpener opener = GsiOpener.PROVIDER;

    /** Finds the connection a received message speaks for, and drops and counts the rest. */
    final CmMessageAuth auth = new CmMessageAuth();
    /** The ids by port space and port (cma.c's bind lists). */
    final CmPorts ports = new CmPorts();
    private final Map<String, CmAgent> agents = new HashMap<>();
    private final Map<String, DeviceRef> contexts = new HashMap<>();

    private final CmReq req = new CmReq();
    private final CmRep rep = new CmRep();
    private final CmRtu rtu = new CmRtu();
    private final CmRej rej = new CmRej();
    private final CmMra mra = new CmMra();
    private final CmDreq dreq = new CmDreq();
    private final CmDrep drep = new CmDrep();
    /** Service id resolution for UD ids (SIDR, cm.c's sidr handlers). */
    private final CmSidr sidr = new CmSidr(this);

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

    /**
     * {@return agent counters for tests and tools: malformed, unmatched, send errors, requests that waited
     * for a flow slot, turns with MADs, MADs taken in them}
     */
    long[] agentCounters(String deviceName, int portNum) {
        return read(() -> {
            CmAgent a = agents.get(deviceName + "/" + portNum);
            return a == null ? null : new long[] {a.malformed, a.unmatched, a.sendErrors, a.deferred, a.turns, a.taken};
        });
    }

    /** {@return how many connections the protocol tables hold (a test checks that none leak)} */
    int connectionCount() {
        return read(auth::size);
    }

    /** {@return how many agents are open (a test checks that they go with their last id)} */
    int agentCount() {
        return read(agents::size);
    }

    // ---------------------------------------------------------------- device contexts and agents

    /** The devices address resolution scans, and when they were listed (guarded by lock). */
    private List<Device> deviceList = List.of();
    private long deviceListNs;

    /**
     * The devices to resolve addresses on, those the engine has open first. {@link Verbs#devices()}
     * asks every provider (a service lookup, libibverbs' device list) and costs milliseconds, under
     * the engine's lock, so the list is kept for a second; {@code fresh} lists them again (a lookup that
     * found nothing in the kept list tries once more with a fresh one: a device made just now is found).
     */
    List<Device> devicesForResolve(boolean fresh) {
        lock.lock();
        try {
            long now = System.nanoTime();
            if (fresh || deviceList.isEmpty() || now - deviceListNs > 1_000_000_000L) {
                deviceList = List.copyOf(Verbs.devices());
                deviceListNs = now;
            }
            List<Device> open = new ArrayList<>(deviceList.size());
            List<Device> rest = new ArrayList<>();
            for (Device d : deviceList) {
                (contexts.containsKey(d.name()) ? open : rest).add(d);
            }
            open.addAll(rest);
            return open;
        } finally {
            lock.unlock();
        }
    }

    Context acquireContext(Device d) {
        lock.lock();
        try {
            DeviceRef r = contexts.get(d.name());
            if (r == null) {
                r = new DeviceRef(d.open());
                contexts.put(d.name(), r);
            }
            r.refs++;
            return r.ctx;
        } finally {
            lock.unlock();
        }
    }

    void releaseContext(String name) {
        lock.lock();
        try {
            DeviceRef r = contexts.get(name);
            if (r != null && --r.refs <= 0) {
                try {
                    r.ctx.close();
                    contexts.remove(name);
                } catch (RuntimeException e) {
                    r.refs = 0; // still in use (the program's PDs, CQs, QPs): kept open, tried again later
                }
            }
        } finally {
            lock.unlock();
        }
    }

    private CmAgent acquireAgent(Device d, int portNum, int gidIndex) {
        String key = d.name() + "/" + portNum;
        CmAgent a = agents.get(key);
        if (a == null) {
            Context ctx = acquireContext(d);
            GsiPort gsi;
            try {
                gsi = opener.open(ctx, portNum, gidIndex);
            } catch (RuntimeException e) {
                releaseContext(d.name());
                throw e;
            }
            a = new CmAgent(this, key, d.name(), ctx, gsi, portNum, gidIndex);
            agents.put(key, a);
            a.start();
        }
        a.refs++;
        return a;
    }

    private void releaseAgent(CmAgent a) {
        if (--a.refs <= 0 && agents.remove(a.key, a)) {
            a.close();
            releaseContext(a.deviceName);
        }
    }

    /** Binds {@code id} to a device port: its context, GID and agent. */
    private void attach(CmId id, DeviceMatch m) {
        CmAgent a = acquireAgent(m.device(), m.portNum(), m.gidIndex());
        id.agent = a;
        a.members.add(id);
        id.context = acquireContext(m.device());
        id.deviceName = m.device().name();
        id.portNum = m.portNum();
        id.gidIndex = m.gidIndex();
        id.sgid = m.gid();
        id.caGuid = m.device().guid();
    }

    // ---------------------------------------------------------------- the API

    private static void checkOpen(CmId id, String step) {
        if (id.userClosed) {
            throw CmWords.closed(id, step);
        }
    }

    private static VerbsException wrongState(CmId id, String step) {
        return CmWords.wrongState(id, step);
    }

    void setOption(CmId id, int which, int value, int max) {
        if (value < 0 || value > max) {
            throw CmWords.error(Errno.EINVAL, "set an option of", id, "the value must be 0.." + max + ", got " + value);
        }
        lock.lock();
        try {
            checkOpen(id, "set an option of");
            switch (which) {
                case 0 -> id.responseTimeout = value;
                case 1 -> id.maxCmRetries = value;
                case 2 -> id.ackTimeout = value;
                default -> id.minRnrTimer = value;
            }
        } finally {
            lock.unlock();
        }
    }

    void bindAddr(CmId id, InetSocketAddress addr) {
        lock.lock();
        try {
            checkOpen(id, "bind to");
            if (id.state != State.IDLE) {
                throw wrongState(id, "bind to");
            }
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
                    attach(id, m);
                } catch (RuntimeException e) {
                    ports.unbind(id);
                    throw e instanceof VerbsException v ? CmWords.naming(v, "bind to", addr) : e;
                }
            }
            id.state = State.ADDR_BOUND;
        } finally {
            lock.unlock();
        }
    }

    void resolveAddr(CmId id, InetSocketAddress src, InetSocketAddress dst, int timeoutMs) {
        lock.lock();
        try {
            checkOpen(id, "resolve address of");
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
                    attach(id, m);
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
        } finally {
            lock.unlock();
        }
    }

    void resolveRoute(CmId id, int timeoutMs) {
        lock.lock();
        try {
            checkOpen(id, "resolve route to");
            if (id.state != State.ADDR_RESOLVED && id.state != State.ROUTE_RESOLVED) {
                throw wrongState(id, "resolve route to");
            }
            // RoCE: the path is the GID pair; the port must still be up
            if (id.context.queryPort(id.portNum).state() != org.rdma4j.verbs.PortState.ACTIVE) {
                post(id, CmEventType.ROUTE_ERROR, -Errno.ENODEV, null, null, null);
                return;
            }
            id.state = State.ROUTE_RESOLVED;
            post(id, CmEventType.ROUTE_RESOLVED, 0, null, null, null);
        } finally {
            lock.unlock();
        }
    }

    void listen(CmId id, int backlog) {
        lock.lock();
        try {
            checkOpen(id, "listen on");
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
                        CmAgent a = acquireAgent(m.device(), m.portNum(), m.gidIndex());
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
        } finally {
            lock.unlock();
        }
    }

    QueuePair createQp(CmId id, ProtectionDomain pd, QpInitAttr attr) {
        lock.lock();
        try {
            checkOpen(id, "create QP for");
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
        } finally {
            lock.unlock();
        }
    }

    void joinMulticast(CmId id, InetAddress group, MulticastJoinFlag flag, Object context) {
        lock.lock();
        try {
            CmMulticast.join(this, id, group, flag, context);
        } finally {
            lock.unlock();
        }
    }

    void leaveMulticast(CmId id, InetAddress group) {
        lock.lock();
        try {
            CmMulticast.leave(id, group);
        } finally {
            lock.unlock();
        }
    }

    void destroyQp(CmId id) {
        lock.lock();
        try {
            CmMulticast.leaveAll(id); // an attached QP cannot be destroyed
            QueuePair qp = id.qp;
            if (qp != null) {
                qp.close();
                id.qp = null;
            }
        } finally {
            lock.unlock();
        }
    }

    void connect(CmId id, ConnParam p) {
        lock.lock();
        try {
            checkOpen(id, "connect to");
            if (id.state != State.ROUTE_RESOLVED) {
                throw wrongState(id, "connect to");
            }
            if (id.ps == PortSpace.UDP) {
                sidr.connect(id, p);
                return;
            }
            p.checkPrivateData(ConnParam.MAX_REQ_PRIVATE_DATA, CmWords.where("connect to", id.remote, id.local));
            int qpn = id.qp != null ? id.qp.qpn() : p.qpNum();
            if (qpn == 0) {
                throw CmWords.error(Errno.EINVAL, "connect to", id, "needs the id's QP or ConnParam.qpNum");
            }
            id.localQpn = qpn; // id.localPsn was chosen when the REQ came (initQpAttr may have used it)
            id.responderResources = p.responderResources();
            id.initiatorDepth = p.initiatorDepth();
            id.retryCount = p.retryCount();
            id.rnrRetryCount = p.rnrRetryCount();
            id.pathMtu = id.context.queryPort(id.portNum).activeMtu().value();
            id.localCommId = auth.newLocalId(id);
            id.tid = newTid(id);
            MemorySegment m = id.agent.tx;
            req.wrap(m).clearAndInit(id.tid);
            byte[] lg = id.sgid.bytes();
            byte[] rg = id.dgid.bytes();
            req.localCommId(id.localCommId).serviceId(id.ps.serviceId(id.remote.getPort())).localCaGuid(id.caGuid)
                    .localQkey(0).localQpn(qpn).responderResources(p.responderResources())
                    .initiatorDepth(p.initiatorDepth()).remoteCmResponseTimeout(id.responseTimeout)
                    .transportServiceType(CmReq.TRANSPORT_RC).flowControl(p.flowControl()).startingPsn(id.localPsn)
                    .localCmResponseTimeout(id.responseTimeout).retryCount(p.retryCount()).pkey(0xFFFF)
                    .pathMtu(id.pathMtu).rnrRetryCount(p.rnrRetryCount()).maxCmRetries(id.maxCmRetries)
                    .srq(p.srq()).primaryLocalLid(0xFFFF).primaryRemoteLid(0xFFFF).primaryLocalGidSet(lg)
                    .primaryRemoteGidSet(rg).primaryHopLimit(CmQpAttrs.HOP_LIMIT).primaryLocalAckTimeout(id.ackTimeout);
            byte[] user = p.rawPrivateData();
            CmaHeader.write(m, CmReq.PRIVATE_DATA_OFFSET, id.local.getAddress(), id.local.getPort(),
                    id.remote.getAddress());
            MemorySegment.copy(user, 0, m, ValueLayout.JAVA_BYTE, CmReq.PRIVATE_DATA_OFFSET + CmaHeader.LENGTH,
                    user.length);
            id.state = State.REQ_SENT;
            id.retriesLeft = id.maxCmRetries;
            CmMad.sendRequest(id, CmMad.cmTimeNs(id.responseTimeout) + CmMad.cmTimeNs(id.ackTimeout));
        } finally {
            lock.unlock();
        }
    }

    void accept(CmId id, ConnParam p) {
        lock.lock();
        try {
            checkOpen(id, "accept from");
            if (id.state != State.REQ_RCVD) {
                throw wrongState(id, "accept from");
            }
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
            id.localQpn = qpn; // id.localPsn was chosen when the REQ came (initQpAttr may have used it)
            id.responderResources = p.responderResources();
            id.initiatorDepth = p.initiatorDepth();
            if (id.qp != null) {
                // the passive side's RTS uses the retry counts the REQ asked for (cm.c does the same)
                moveToRts(id, id.remoteAckTimeout != 0 ? id.remoteAckTimeout : id.ackTimeout);
            }
            MemorySegment m = id.agent.tx;
            rep.wrap(m).clearAndInit(id.tid);
            rep.localCommId(id.localCommId).remoteCommId(id.remoteCommId).localQkey(0).localQpn(qpn)
                    .startingPsn(id.localPsn).responderResources(p.responderResources())
                    .initiatorDepth(p.initiatorDepth()).flowControl(p.flowControl()).rnrRetryCount(p.rnrRetryCount())
                    .srq(p.srq()).localCaGuid(id.caGuid);
            byte[] user = p.rawPrivateData();
            rep.setPrivateData(user, 0, user.length);
            id.state = State.REP_SENT;
            id.retriesLeft = id.peerMaxCmRetries;
            CmMad.sendRequest(id, CmMad.cmTimeNs(id.peerResponseTimeout) + CmMad.cmTimeNs(id.ackTimeout));
        } finally {
            lock.unlock();
        }
    }

    void reject(CmId id, byte[] pd) {
        lock.lock();
        try {
            checkOpen(id, "reject");
            if (id.state != State.REQ_RCVD) {
                throw wrongState(id, "reject");
            }
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
            sendRej(id, CmRej.REASON_CONSUMER_DEFINED, CmRej.MSG_REQ, pd);
            id.state = State.DONE;
            unindex(id);
        } finally {
            lock.unlock();
        }
    }

    void establish(CmId id) {
        lock.lock();
        try {
            checkOpen(id, "establish with");
            if (id.state != State.REP_RCVD) {
                throw wrongState(id, "establish with");
            }
            sendRtu(id);
            id.state = State.ESTABLISHED;
        } finally {
            lock.unlock();
        }
    }

    void disconnect(CmId id) {
        lock.lock();
        try {
            checkOpen(id, "disconnect from");
            if (id.ps == PortSpace.UDP) {
                return; // a UD id has no connection to take down
            }
            switch (id.state) {
                case ESTABLISHED, REP_SENT, REP_RCVD -> startDisconnect(id);
                case DREQ_RCVD -> answerDreq(id, true);
                case DREQ_SENT, TIMEWAIT, DONE -> {
                    // already disconnected or disconnecting
                }
                default -> throw wrongState(id, "disconnect from");
            }
        } finally {
            lock.unlock();
        }
    }

    void destroy(CmId id) {
        lock.lock();
        try {
            if (id.userClosed) {
                return;
            }
            CmMulticast.leaveAll(id);
            id.userClosed = true;
            switch (id.ps == PortSpace.UDP && id.state != State.REQ_RCVD ? State.IDLE : id.state) {
                case REQ_RCVD -> {
                    if (id.ps == PortSpace.UDP) {
                        sidr.sendRep(id, SidrRep.STATUS_REJECT, new byte[0], 0);
                    } else {
                        sendRej(id, CmRej.REASON_CONSUMER_DEFINED, CmRej.MSG_REQ, new byte[0]);
                    }
                }
                case REQ_SENT -> {
                    if (!id.deferred) { // a REQ still waiting for its slot never reached the peer
                        sendRej(id, CmRej.REASON_TIMEOUT, CmRej.MSG_REQ, new byte[0], guidAri(id));
                    }
                    qpToError(id);
                }
                case REP_RCVD -> {
                    sendRej(id, CmRej.REASON_CONSUMER_DEFINED, CmRej.MSG_REP, new byte[0]);
                    qpToError(id);
                }
                case REP_SENT -> {
                    sendRej(id, CmRej.REASON_CONSUMER_DEFINED, CmRej.MSG_OTHER, new byte[0]);
                    qpToError(id);
                }
                case ESTABLISHED -> { // as cm_destroy_id: one DREQ, no retries, and the id goes at once
                    qpToError(id);
                    buildDreq(id);
                    id.agent.send(id.dgid);
                }
                case DREQ_RCVD -> answerDreq(id, false);
                default -> {
                }
            }
            // nothing lingers: a destroyed id holds no device, whatever state it ended in (a late DREQ
            // for it is answered as for an unknown id)
            id.state = State.DESTROYED;
            unindex(id);
            release(id);
        } finally {
            lock.unlock();
        }
    }

    void migrate(CmId id, CmEventChannel to) {
        lock.lock();
        try {
            checkOpen(id, "migrate");
            if (to.isClosed()) {
                throw CmWords.error(Errno.EBADF, "migrate", id, "the event channel to migrate to is closed");
            }
            CmEventChannel from = id.channel;
            if (from == to) {
                return;
            }
            id.channel = to; // provider events post under this lock too: none slips past the move
            from.moveEventsOf(id, to);
        } finally {
            lock.unlock();
        }
    }

    void connectRequestTaken(CmId listener) {
        if (listener == null) {
            return;
        }
        lock.lock();
        try {
            listener.pendingRequests--;
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- state machine helpers

    static long newTid(CmId id) {
        return (long) id.localCommId << 32 | ThreadLocalRandom.current().nextInt() & 0xFFFF_FFFFL;
    }

    private void sendRtu(CmId id) {
        rtu.wrap(id.agent.tx).clearAndInit(newTid(id));
        rtu.localCommId(id.localCommId).remoteCommId(id.remoteCommId);
        CmMad.sendAndRemember(id); // kept: a duplicate REP (our RTU was lost) is answered with it
    }

    private void sendRej(CmId id, int reason, int msg, byte[] pd) {
        sendRej(id, reason, msg, pd, null);
    }

    private void sendRej(CmId id, int reason, int msg, byte[] pd, byte[] ari) {
        rej.wrap(id.agent.tx).clearAndInit(id.tid);
        rej.localCommId(id.localCommId).remoteCommId(id.remoteCommId).messageRejected(msg).reason(reason);
        if (ari != null) {
            rej.ari(ari, ari.length);
        }
        rej.setPrivateData(pd, 0, pd.length);
        id.agent.send(id.dgid);
    }

    private static byte[] guidAri(CmId id) {
        return java.nio.ByteBuffer.allocate(8).putLong(id.caGuid).array(); // a timeout REJ's ARI: our CA GUID
    }

    private void buildDreq(CmId id) {
        dreq.wrap(id.agent.tx).clearAndInit(newTid(id));
        dreq.localCommId(id.localCommId).remoteCommId(id.remoteCommId).remoteQpn(id.remoteQpn);
    }

    /** rdma_disconnect (or destroy) after the peer's DREQ: the QP to ERROR, then the DREP (cma.c, cm.c). */
    private void answerDreq(CmId id, boolean timewait) {
        qpToError(id);
        sendDrep(id.agent, id.dgid, id.localCommId, id.remoteCommId, id.tid);
        if (timewait) {
            id.state = State.TIMEWAIT; // DISCONNECTED came with the DREQ; TIMEWAIT_EXIT follows
            CmMad.schedule(id, CmMad.cmTimeNs(id.ackTimeout));
        }
    }

    private void startDisconnect(CmId id) {
        qpToError(id);
        buildDreq(id);
        id.state = State.DREQ_SENT;
        id.retriesLeft = id.maxCmRetries;
        CmMad.sendRequest(id, CmMad.cmTimeNs(id.responseTimeout) + CmMad.cmTimeNs(id.ackTimeout));
    }

    private void sendDrep(CmAgent a, Gid to, int localCommId, int remoteCommId, long tid) {
        drep.wrap(a.tx).clearAndInit(tid);
        drep.localCommId(localCommId).remoteCommId(remoteCommId);
        a.send(to);
    }

    private void enterTimewait(CmId id, int status, byte[] pd) {
        id.state = State.TIMEWAIT;
        post(id, CmEventType.DISCONNECTED, status, null, pd, null);
        CmMad.schedule(id, CmMad.cmTimeNs(id.ackTimeout));
    }

    /**
     * rdma_init_qp_attr: the attributes that move a QP the program created itself (not through
     * {@link #createQp}) to {@code state} for this id, as ib_cm_init_qp_attr gives them: INIT any time the
     * id is on a device (RC: with the remote access once a connection is being set up, else none; UD: the
     * Q_Key); RTR and RTS of an RC id once the connection's values are known (a CONNECT_REQUEST's id, or an
     * active id after CONNECT_RESPONSE or later). EINVAL in any other state.
     */
    QpAttr initQpAttr(CmId id, QpState state) {
        lock.lock();
        try {
            checkOpen(id, "init QP attributes for");
            if (id.context == null || id.state == State.LISTEN) {
                throw CmWords.error(Errno.EINVAL, "init QP attributes for", id, "the id is not bound to a device yet (resolve it first)");
            }
            return CmQpAttrs.initQpAttr(id, state);
        } finally {
            lock.unlock();
        }
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
            releaseAgent(id.agent);
            id.agent = null;
        }
        for (CmAgent a : id.listenAgents) {
            a.members.remove(id);
            releaseAgent(a);
        }
        id.listenAgents = List.of();
        if (id.deviceName != null) {
            releaseContext(id.deviceName);
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
            if (agents.remove(a.key, a)) {
                releaseContext(a.deviceName);
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
                        dispatch(a, mad, from);
                    } catch (RuntimeException e) {
                        a.malformed++; // whatever a MAD does, it must not take the agent down
                    }
                } while (++n < CmAgent.BATCH && a.receiveNow());
                a.turns++;
                a.taken += n;
            }
            CmMad.fireDue(a, this::fire);
        } finally {
            lock.unlock();
        }
    }

    private void fire(CmId id) {
        switch (id.state) {
            case REQ_SENT, REP_SENT -> {
                if (!CmMad.retry(id, id.state == State.REQ_SENT
                        ? CmMad.cmTimeNs(id.responseTimeout) + CmMad.cmTimeNs(id.ackTimeout)
                        : CmMad.cmTimeNs(id.peerResponseTimeout) + CmMad.cmTimeNs(id.ackTimeout))) {
                    qpToError(id);
                    if (id.state == State.REP_SENT) {
                        sendRej(id, CmRej.REASON_TIMEOUT, CmRej.MSG_OTHER, new byte[0], guidAri(id));
                    }
                    post(id, CmEventType.UNREACHABLE, -Errno.ETIMEDOUT, null, null, null);
                    ended(id);
                }
            }
            case DREQ_SENT -> {
                if (!CmMad.retry(id, CmMad.cmTimeNs(id.responseTimeout) + CmMad.cmTimeNs(id.ackTimeout))) {
                    CmMad.releaseSlot(id);
                    enterTimewait(id, -Errno.ETIMEDOUT, null);
                }
            }
            case TIMEWAIT -> {
                post(id, CmEventType.TIMEWAIT_EXIT, 0, null, null, null);
                ended(id);
            }
            default -> {
            }
        }
    }

    private void dispatch(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        int attr = MadCheck.check(mad, GsiPort.MAD_SIZE);
        int named = MadHeader.attributeId(mad);
        if (attr == MadCheck.BAD_ATTRIBUTE && (named == MadHeader.ATTR_LAP || named == MadHeader.ATTR_APR)) {
            auth.drop(a, named); // alternate paths are not offered: a LAP or APR changes nothing
            return;
        }
        if (attr < 0) {
            a.malformed++;
            return;
        }
        switch (attr) {
            case MadHeader.ATTR_REQ -> onReq(a, mad, from);
            case MadHeader.ATTR_REP -> onRep(a, mad, from);
            case MadHeader.ATTR_RTU -> onRtu(a, mad, from);
            case MadHeader.ATTR_MRA -> onMra(a, mad, from);
            case MadHeader.ATTR_REJ -> onRej(a, mad, from);
            case MadHeader.ATTR_DREQ -> onDreq(a, mad, from);
            case MadHeader.ATTR_DREP -> onDrep(a, mad, from);
            case MadHeader.ATTR_SIDR_REQ -> sidr.onReq(a, mad, from);
            case MadHeader.ATTR_SIDR_REP -> sidr.onRep(a, mad, from);
            default -> auth.drop(a, attr);
        }
    }

    private void issueRej(CmAgent a, Gid to, long tid, int theirCommId, int reason) {
        rej.wrap(a.tx).clearAndInit(tid);
        rej.localCommId(0).remoteCommId(theirCommId).messageRejected(CmRej.MSG_REQ).reason(reason);
        a.send(to);
    }

    private void onReq(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        req.wrap(mad);
        long tid = MadHeader.transactionId(mad);
        CmId dup = auth.byRemote(from.gid, req.localCommId());
        if (dup != null) {
            switch (dup.state) {
                case REQ_RCVD -> sendMra(dup, CmMra.MSG_REQ); // still deciding: say so again
                case REP_SENT -> CmMad.resend(dup);  // our REP may be what was lost
                default -> {
                }
            }
            return;
        }
        long sid = req.serviceId();
        int ps = ServiceId.portSpace(sid);
        boolean hdr = ServiceId.carriesCmaHeader(sid);
        InetAddress dstAddr = hdr ? CmaHeader.dstAddress(mad, CmReq.PRIVATE_DATA_OFFSET) : null;
        CmId l = req.transportServiceType() == CmReq.TRANSPORT_RC
                ? ports.findListener(ps, ServiceId.port(sid), dstAddr) : null;
        if (l == null) {
            issueRej(a, from.gid, tid, req.localCommId(), CmRej.REASON_INVALID_SERVICE_ID);
            return;
        }
        if (l.pendingRequests >= l.backlog) {
            issueRej(a, from.gid, tid, req.localCommId(), CmRej.REASON_CONSUMER_DEFINED);
            return;
        }
        CmId c = CmId.child(l);
        c.responseTimeout = l.responseTimeout;
        c.maxCmRetries = l.maxCmRetries;
        c.ackTimeout = l.ackTimeout;
        c.minRnrTimer = l.minRnrTimer;
        Device dev = a.context.device(); // not Verbs.device: a provider lookup per MAD, under the lock
        byte[] rg = new byte[16];
        req.primaryRemoteGid(rg);
        Gid ourGid = Gid.of(rg);
        int gidIndex = a.gidIndex;
        if (!ourGid.equals(a.gsi.localGid())) { // the agent's own GID is the common case: no search
            try {
                int n = a.context.queryPort(a.portNum).gidTblLen();
                for (int i = 0; i < n; i++) {
                    if (ourGid.equals(a.context.queryGid(a.portNum, i))) {
                        gidIndex = i;
                        break;
                    }
                }
            } catch (RuntimeException e) {
                // keep the agent's GID
            }
        }
        c.agent = a;
        a.refs++;
        a.members.add(c);
        c.context = acquireContext(dev);
        c.deviceName = a.deviceName;
        c.portNum = a.portNum;
        c.gidIndex = gidIndex;
        c.sgid = gidIndex == a.gidIndex ? a.gsi.localGid() : a.context.queryGid(a.portNum, gidIndex);
        c.caGuid = dev.guid();
        c.dgid = from.gid;
        c.localCommId = auth.newLocalId(c);
        c.remoteCommId = req.localCommId();
        c.remoteCaGuid = req.localCaGuid();
        c.tid = tid;
        c.remoteQpn = req.localQpn();
        c.remotePsn = req.startingPsn();
        c.localPsn = ThreadLocalRandom.current().nextInt() & 0xFFFFFF; // ours, sent in the REP
        c.pathMtu = Math.min(req.pathMtu(), a.context.queryPort(a.portNum).activeMtu().value());
        c.responderResources = req.initiatorDepth();
        c.initiatorDepth = req.responderResources();
        c.retryCount = req.retryCount();
        c.rnrRetryCount = req.rnrRetryCount();
        c.remoteAckTimeout = req.primaryLocalAckTimeout();
        c.peerResponseTimeout = req.localCmResponseTimeout();
        c.peerMaxCmRetries = req.maxCmRetries();
        c.listener = l;
        auth.indexRemote(c);
        byte[] pd;
        if (hdr) {
            InetAddress srcAddr = CmaHeader.srcAddress(mad, CmReq.PRIVATE_DATA_OFFSET);
            c.local = new InetSocketAddress(dstAddr, ServiceId.port(sid));
            c.remote = new InetSocketAddress(srcAddr, CmaHeader.port(mad, CmReq.PRIVATE_DATA_OFFSET));
            pd = new byte[CmaHeader.REQ_USER_DATA_LENGTH];
            MemorySegment.copy(mad, ValueLayout.JAVA_BYTE, CmReq.PRIVATE_DATA_OFFSET + CmaHeader.LENGTH, pd, 0,
                    pd.length);
        } else {
            c.local = new InetSocketAddress(c.sgid.toInetAddress(), ServiceId.port(sid));
            c.remote = new InetSocketAddress(from.gid.toInetAddress(), 0);
            pd = req.privateData();
        }
        ConnParam param = new ConnParam().responderResources(req.responderResources())
                .initiatorDepth(req.initiatorDepth()).retryCount(req.retryCount())
                .rnrRetryCount(req.rnrRetryCount()).srq(req.srq()).flowControl(req.flowControl())
                .qpNum(req.localQpn());
        c.state = State.REQ_RCVD;
        l.pendingRequests++;
        if (!c.channel.post(new CmEvent(c.channel, CmEventType.CONNECT_REQUEST, 0, c, l, pd, param))) {
            l.pendingRequests--;
            sendRej(c, CmRej.REASON_CONSUMER_DEFINED, CmRej.MSG_REQ, new byte[0]);
            c.userClosed = true;
            ended(c);
            return;
        }
        sendMra(c, CmMra.MSG_REQ);
    }

    /** An MRA for the peer's REQ or REP ({@code what}): the program has not answered yet. */
    private void sendMra(CmId c, int what) {
        mra.wrap(c.agent.tx).clearAndInit(c.tid);
        mra.localCommId(c.localCommId).remoteCommId(c.remoteCommId).messageMraed(what)
                .serviceTimeout(Math.min(31, c.responseTimeout + 4));
        c.agent.send(c.dgid);
    }

    private void onMra(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        mra.wrap(mad);
        CmId id = mra.messageMraed() == CmMra.MSG_REQ
                ? auth.forLocal(a, from.gid, MadHeader.ATTR_MRA, mra.remoteCommId(), mra.localCommId())
                : auth.forBoth(a, from.gid, MadHeader.ATTR_MRA, mra.remoteCommId(), mra.localCommId());
        if (id == null) {
            return;
        }
        if (id.state == State.REQ_SENT && mra.messageMraed() == CmMra.MSG_REQ) {
            id.remoteCommId = mra.localCommId();
            CmMad.releaseSlot(id); // the peer's agent has taken the REQ
            CmMad.schedule(id, CmMad.cmTimeNs(mra.serviceTimeout()) + CmMad.cmTimeNs(id.ackTimeout));
        } else if (id.state == State.REP_SENT && mra.messageMraed() == CmMra.MSG_REP) {
            // the slot stays until the RTU: it bounds the RTUs the peer's program can send at once
            CmMad.schedule(id, CmMad.cmTimeNs(mra.serviceTimeout()) + CmMad.cmTimeNs(id.ackTimeout));
        } else {
            auth.drop(a, MadHeader.ATTR_MRA); // nothing waits for it: stale or forged
        }
    }

    private void onRep(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        rep.wrap(mad);
        CmId id = auth.forLocal(a, from.gid, MadHeader.ATTR_REP, rep.remoteCommId(), rep.localCommId());
        if (id == null) {
            return;
        }
        if (id.state == State.ESTABLISHED && id.listener == null) {
            CmMad.resend(id); // a duplicate REP: our RTU was lost
            return;
        }
        if (id.state == State.REP_RCVD) {
            sendMra(id, CmMra.MSG_REP); // a duplicate REP: the program has not established yet; wait longer (cma.c too)
            return;
        }
        if (id.state != State.REQ_SENT) {
            auth.drop(a, MadHeader.ATTR_REP);
            return;
        }
        CmMad.cancelTimer(id);
        id.remoteCommId = rep.localCommId();
        id.remoteCaGuid = rep.localCaGuid();
        id.remoteQpn = rep.localQpn();
        id.remotePsn = rep.startingPsn();
        id.responderResources = rep.initiatorDepth();
        id.initiatorDepth = rep.responderResources();
        id.rnrRetryCount = rep.rnrRetryCount();
        auth.indexRemote(id);
        byte[] pd = rep.privateData();
        ConnParam param = new ConnParam().responderResources(rep.responderResources())
                .initiatorDepth(rep.initiatorDepth()).rnrRetryCount(rep.rnrRetryCount()).srq(rep.srq())
                .flowControl(rep.flowControl()).qpNum(rep.localQpn());
        if (id.qp == null) {
            id.state = State.REP_RCVD;
            post(id, CmEventType.CONNECT_RESPONSE, 0, null, pd, param);
            return;
        }
        try {
            moveToRts(id, id.ackTimeout);
        } catch (RuntimeException e) {
            int errno = e instanceof VerbsException v ? v.errno() : Errno.EINVAL;
            sendRej(id, CmRej.REASON_CONSUMER_DEFINED, CmRej.MSG_REP, new byte[0]);
            qpToError(id);
            post(id, CmEventType.CONNECT_ERROR, -errno, null, null, null);
            ended(id);
            return;
        }
        sendRtu(id);
        id.state = State.ESTABLISHED;
        post(id, CmEventType.ESTABLISHED, 0, null, pd, param);
    }

    private void onRtu(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        rtu.wrap(mad);
        CmId id = auth.forBoth(a, from.gid, MadHeader.ATTR_RTU, rtu.remoteCommId(), rtu.localCommId());
        if (id != null && id.state == State.REP_SENT) {
            CmMad.cancelTimer(id);
            id.state = State.ESTABLISHED;
            post(id, CmEventType.ESTABLISHED, 0, null, rtu.privateData(), null);
        } else if (id != null) {
            auth.drop(a, MadHeader.ATTR_RTU);
        }
    }

    private void onRej(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        rej.wrap(mad);
        CmId id = auth.forRej(a, from.gid, rej);
        if (id == null) {
            return;
        }
        switch (id.state) {
            case REQ_SENT, REP_RCVD, REQ_RCVD, REP_SENT -> {
                qpToError(id);
                post(id, CmEventType.REJECTED, rej.reason(), null, rej.privateData(), null);
                ended(id);
            }
            case ESTABLISHED, DREQ_SENT, DREQ_RCVD -> {
                // the peer dropped a connection we count as up (it was destroyed before our RTU came,
                // say): as cm.c, report the REJ and go through time wait
                CmMad.cancelTimer(id);
                qpToError(id);
                post(id, CmEventType.REJECTED, rej.reason(), null, rej.privateData(), null);
                id.state = State.TIMEWAIT;
                CmMad.schedule(id, CmMad.cmTimeNs(id.ackTimeout));
            }
            default -> auth.drop(a, MadHeader.ATTR_REJ);
        }
    }

    private void onDreq(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        dreq.wrap(mad);
        long tid = MadHeader.transactionId(mad);
        CmId id = auth.forBoth(a, from.gid, MadHeader.ATTR_DREQ, dreq.remoteCommId(), dreq.localCommId());
        if (id == null) {
            // unknown or long gone: answer so that the peer stops asking (cm.c does the same); nothing changes
            sendDrep(a, from.gid, dreq.remoteCommId(), dreq.localCommId(), tid);
            return;
        }
        if (!auth.qpnMatches(a, id, dreq.remoteQpn())) {
            return;
        }
        switch (id.state) {
            case ESTABLISHED, REP_SENT, REP_RCVD -> {
                // as cm.c and cma.c: DISCONNECTED now; the QP stays as it is and the DREP goes when the
                // program calls disconnect or destroys the id
                CmMad.cancelTimer(id);
                id.tid = tid;
                id.state = State.DREQ_RCVD;
                post(id, CmEventType.DISCONNECTED, 0, null, dreq.privateData(), null);
            }
            case DREQ_SENT -> { // both sides asked: the program has already called disconnect
                CmMad.cancelTimer(id);
                sendDrep(a, id.dgid, id.localCommId, id.remoteCommId, tid);
                enterTimewait(id, 0, dreq.privateData());
            }
            case TIMEWAIT -> sendDrep(a, id.dgid, id.localCommId, id.remoteCommId, tid);
            case DREQ_RCVD -> { // a repeated DREQ: the program has not answered yet
            }
            default -> auth.drop(a, MadHeader.ATTR_DREQ);
        }
    }

    private void onDrep(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        drep.wrap(mad);
        CmId id = auth.forBoth(a, from.gid, MadHeader.ATTR_DREP, drep.remoteCommId(), drep.localCommId());
        if (id != null && id.state == State.DREQ_SENT) {
            CmMad.cancelTimer(id);
            enterTimewait(id, 0, drep.privateData());
        } else if (id != null) {
            auth.drop(a, MadHeader.ATTR_DREP);
        }
    }

}
