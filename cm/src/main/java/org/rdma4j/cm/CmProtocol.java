// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.rdma4j.cm.CmQpAttrs.moveToRts;
import static org.rdma4j.cm.CmQpAttrs.qpToError;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
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
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * The IB CM protocol (IBTA vol. 1 ch. 12), as the kernel's cm.c runs it: the messages an id sends
 * (REQ, MRA, REP, RTU, REJ, DREQ, DREP), the handlers of those a port receives (LAP and APR are
 * dropped: alternate paths are not offered), the active and passive state machines they move, and
 * what a request's timeout does. {@link CmMessageAuth} decides which connection a message may
 * change; {@link CmMad} sends and retransmits; SIDR is {@link CmSidr}'s. Guarded by the engine's lock.
 */
final class CmProtocol {
    private final CmEngine engine;
    private final CmReq req = new CmReq();
    private final CmRep rep = new CmRep();
    private final CmRtu rtu = new CmRtu();
    private final CmRej rej = new CmRej();
    private final CmMra mra = new CmMra();
    private final CmDreq dreq = new CmDreq();
    private final CmDrep drep = new CmDrep();
    /** A request's timer fired ({@link CmMad#fireDue}). */
    final Consumer<CmId> timeout = this::fire;

    CmProtocol(CmEngine engine) {
        this.engine = engine;
    }

    /** The REQ of rdma_connect on an RC id (checked by the engine), with its timer: REQ_SENT. */
    void sendReq(CmId id, ConnParam p, int qpn) {
        id.conn.localQpn = qpn; // id.conn.localPsn was chosen when the REQ came (initQpAttr may have used it)
        id.conn.responderResources = p.responderResources();
        id.conn.initiatorDepth = p.initiatorDepth();
        id.conn.retryCount = p.retryCount();
        id.conn.rnrRetryCount = p.rnrRetryCount();
        id.conn.pathMtu = id.context.queryPort(id.portNum).activeMtu().value();
        id.conn.localCommId = engine.auth.newLocalId(id);
        id.conn.tid = newTid(id);
        MemorySegment m = id.agent.tx;
        req.wrap(m).clearAndInit(id.conn.tid);
        byte[] lg = id.sgid.bytes();
        byte[] rg = id.dgid.bytes();
        req.localCommId(id.conn.localCommId).serviceId(id.ps.serviceId(id.remote.getPort())).localCaGuid(id.conn.caGuid)
                .localQkey(0).localQpn(qpn).responderResources(p.responderResources())
                .initiatorDepth(p.initiatorDepth()).remoteCmResponseTimeout(id.responseTimeout)
                .transportServiceType(CmReq.TRANSPORT_RC).flowControl(p.flowControl()).startingPsn(id.conn.localPsn)
                .localCmResponseTimeout(id.responseTimeout).retryCount(p.retryCount()).pkey(0xFFFF)
                .pathMtu(id.conn.pathMtu).rnrRetryCount(p.rnrRetryCount()).maxCmRetries(id.maxCmRetries)
                .srq(p.srq()).primaryLocalLid(0xFFFF).primaryRemoteLid(0xFFFF).primaryLocalGidSet(lg)
                .primaryRemoteGidSet(rg).primaryHopLimit(CmQpAttrs.HOP_LIMIT).primaryLocalAckTimeout(id.ackTimeout);
        byte[] user = p.rawPrivateData();
        CmaHeader.write(m, CmReq.PRIVATE_DATA_OFFSET, id.local.getAddress(), id.local.getPort(),
                id.remote.getAddress());
        MemorySegment.copy(user, 0, m, ValueLayout.JAVA_BYTE, CmReq.PRIVATE_DATA_OFFSET + CmaHeader.LENGTH,
                user.length);
        id.state = State.REQ_SENT;
        id.conn.retriesLeft = id.maxCmRetries;
        CmMad.sendRequest(id, CmMad.cmTimeNs(id.responseTimeout) + CmMad.cmTimeNs(id.ackTimeout));
    }

    /** The REP of rdma_accept on an RC id (checked by the engine), the QP moved to RTS first: REP_SENT. */
    void sendRep(CmId id, ConnParam p, int qpn) {
        id.conn.localQpn = qpn; // id.conn.localPsn was chosen when the REQ came (initQpAttr may have used it)
        id.conn.responderResources = p.responderResources();
        id.conn.initiatorDepth = p.initiatorDepth();
        if (id.qp != null) {
            // the passive side's RTS uses the retry counts the REQ asked for (cm.c does the same)
            moveToRts(id, id.conn.remoteAckTimeout != 0 ? id.conn.remoteAckTimeout : id.ackTimeout);
        }
        MemorySegment m = id.agent.tx;
        rep.wrap(m).clearAndInit(id.conn.tid);
        rep.localCommId(id.conn.localCommId).remoteCommId(id.conn.remoteCommId).localQkey(0).localQpn(qpn)
                .startingPsn(id.conn.localPsn).responderResources(p.responderResources())
                .initiatorDepth(p.initiatorDepth()).flowControl(p.flowControl()).rnrRetryCount(p.rnrRetryCount())
                .srq(p.srq()).localCaGuid(id.conn.caGuid);
        byte[] user = p.rawPrivateData();
        rep.setPrivateData(user, 0, user.length);
        id.state = State.REP_SENT;
        id.conn.retriesLeft = id.conn.peerMaxCmRetries;
        CmMad.sendRequest(id, CmMad.cmTimeNs(id.conn.peerResponseTimeout) + CmMad.cmTimeNs(id.ackTimeout));
    }

    /**
     * What rdma_destroy_id sends in each state (cm_destroy_id): a REJ for a connection being set up, one
     * DREQ without retries for an established one, the DREP a peer's DREQ waits for; the QP to ERROR.
     */
    void destroying(CmId id) {
        switch (id.ps == PortSpace.UDP && id.state != State.REQ_RCVD ? State.IDLE : id.state) {
            case REQ_RCVD -> {
                if (id.ps == PortSpace.UDP) {
                    engine.sidr.sendRep(id, SidrRep.STATUS_REJECT, new byte[0], 0);
                } else {
                    sendRej(id, CmRej.REASON_CONSUMER_DEFINED, CmRej.MSG_REQ, new byte[0]);
                }
            }
            case REQ_SENT -> {
                if (!id.conn.deferred) { // a REQ still waiting for its slot never reached the peer
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
    }

    static long newTid(CmId id) {
        return (long) id.conn.localCommId << 32 | ThreadLocalRandom.current().nextInt() & 0xFFFF_FFFFL;
    }

    /** An MRA for the peer's REQ or REP ({@code what}): the program has not answered yet. */
    void sendMra(CmId c, int what) {
        mra.wrap(c.agent.tx).clearAndInit(c.conn.tid);
        mra.localCommId(c.conn.localCommId).remoteCommId(c.conn.remoteCommId).messageMraed(what)
                .serviceTimeout(Math.min(31, c.responseTimeout + 4));
        c.agent.send(c.dgid);
    }

    void sendRtu(CmId id) {
        rtu.wrap(id.agent.tx).clearAndInit(newTid(id));
        rtu.localCommId(id.conn.localCommId).remoteCommId(id.conn.remoteCommId);
        CmMad.sendAndRemember(id); // kept: a duplicate REP (our RTU was lost) is answered with it
    }

    void sendRej(CmId id, int reason, int msg, byte[] pd) {
        sendRej(id, reason, msg, pd, null);
    }

    void sendRej(CmId id, int reason, int msg, byte[] pd, byte[] ari) {
        rej.wrap(id.agent.tx).clearAndInit(id.conn.tid);
        rej.localCommId(id.conn.localCommId).remoteCommId(id.conn.remoteCommId).messageRejected(msg).reason(reason);
        if (ari != null) {
            rej.ari(ari, ari.length);
        }
        rej.setPrivateData(pd, 0, pd.length);
        id.agent.send(id.dgid);
    }

    static byte[] guidAri(CmId id) {
        return java.nio.ByteBuffer.allocate(8).putLong(id.conn.caGuid).array(); // a timeout REJ's ARI: our CA GUID
    }

    void buildDreq(CmId id) {
        dreq.wrap(id.agent.tx).clearAndInit(newTid(id));
        dreq.localCommId(id.conn.localCommId).remoteCommId(id.conn.remoteCommId).remoteQpn(id.conn.remoteQpn);
    }

    /** rdma_disconnect (or destroy) after the peer's DREQ: the QP to ERROR, then the DREP (cma.c, cm.c). */
    void answerDreq(CmId id, boolean timewait) {
        qpToError(id);
        sendDrep(id.agent, id.dgid, id.conn.localCommId, id.conn.remoteCommId, id.conn.tid);
        if (timewait) {
            id.state = State.TIMEWAIT; // DISCONNECTED came with the DREQ; TIMEWAIT_EXIT follows
            CmMad.schedule(id, CmMad.cmTimeNs(id.ackTimeout));
        }
    }

    void startDisconnect(CmId id) {
        qpToError(id);
        buildDreq(id);
        id.state = State.DREQ_SENT;
        id.conn.retriesLeft = id.maxCmRetries;
        CmMad.sendRequest(id, CmMad.cmTimeNs(id.responseTimeout) + CmMad.cmTimeNs(id.ackTimeout));
    }

    void sendDrep(CmAgent a, Gid to, int localCommId, int remoteCommId, long tid) {
        drep.wrap(a.tx).clearAndInit(tid);
        drep.localCommId(localCommId).remoteCommId(remoteCommId);
        a.send(to);
    }

    void enterTimewait(CmId id, int status, byte[] pd) {
        id.state = State.TIMEWAIT;
        engine.post(id, CmEventType.DISCONNECTED, status, null, pd, null);
        CmMad.schedule(id, CmMad.cmTimeNs(id.ackTimeout));
    }

    void fire(CmId id) {
        switch (id.state) {
            case REQ_SENT, REP_SENT -> {
                if (!CmMad.retry(id, id.state == State.REQ_SENT
                        ? CmMad.cmTimeNs(id.responseTimeout) + CmMad.cmTimeNs(id.ackTimeout)
                        : CmMad.cmTimeNs(id.conn.peerResponseTimeout) + CmMad.cmTimeNs(id.ackTimeout))) {
                    qpToError(id);
                    if (id.state == State.REP_SENT) {
                        sendRej(id, CmRej.REASON_TIMEOUT, CmRej.MSG_OTHER, new byte[0], guidAri(id));
                    }
                    engine.post(id, CmEventType.UNREACHABLE, -Errno.ETIMEDOUT, null, null, null);
                    engine.ended(id);
                }
            }
            case DREQ_SENT -> {
                if (!CmMad.retry(id, CmMad.cmTimeNs(id.responseTimeout) + CmMad.cmTimeNs(id.ackTimeout))) {
                    CmMad.releaseSlot(id);
                    enterTimewait(id, -Errno.ETIMEDOUT, null);
                }
            }
            case TIMEWAIT -> {
                engine.post(id, CmEventType.TIMEWAIT_EXIT, 0, null, null, null);
                engine.ended(id);
            }
            default -> {
            }
        }
    }

    void dispatch(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        int attr = MadCheck.check(mad, GsiPort.MAD_SIZE);
        int named = MadHeader.attributeId(mad);
        if (attr == MadCheck.BAD_ATTRIBUTE && (named == MadHeader.ATTR_LAP || named == MadHeader.ATTR_APR)) {
            engine.auth.drop(a, named); // alternate paths are not offered: a LAP or APR changes nothing
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
            case MadHeader.ATTR_SIDR_REQ -> engine.sidr.onReq(a, mad, from);
            case MadHeader.ATTR_SIDR_REP -> engine.sidr.onRep(a, mad, from);
            default -> engine.auth.drop(a, attr);
        }
    }

    void issueRej(CmAgent a, Gid to, long tid, int theirCommId, int reason) {
        rej.wrap(a.tx).clearAndInit(tid);
        rej.localCommId(0).remoteCommId(theirCommId).messageRejected(CmRej.MSG_REQ).reason(reason);
        a.send(to);
    }

    void onReq(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        req.wrap(mad);
        long tid = MadHeader.transactionId(mad);
        CmId dup = engine.auth.byRemote(from.gid, req.localCommId());
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
                ? engine.ports.findListener(ps, ServiceId.port(sid), dstAddr) : null;
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
        engine.devices.attachRequest(c, a, dev);
        c.gidIndex = gidIndex;
        c.sgid = gidIndex == a.gidIndex ? a.gsi.localGid() : a.context.queryGid(a.portNum, gidIndex);
        c.conn.caGuid = dev.guid();
        c.dgid = from.gid;
        c.conn.localCommId = engine.auth.newLocalId(c);
        c.conn.remoteCommId = req.localCommId();
        c.conn.remoteCaGuid = req.localCaGuid();
        c.conn.tid = tid;
        c.conn.remoteQpn = req.localQpn();
        c.conn.remotePsn = req.startingPsn();
        c.conn.localPsn = ThreadLocalRandom.current().nextInt() & 0xFFFFFF; // ours, sent in the REP
        c.conn.pathMtu = Math.min(req.pathMtu(), a.context.queryPort(a.portNum).activeMtu().value());
        c.conn.responderResources = req.initiatorDepth();
        c.conn.initiatorDepth = req.responderResources();
        c.conn.retryCount = req.retryCount();
        c.conn.rnrRetryCount = req.rnrRetryCount();
        c.conn.remoteAckTimeout = req.primaryLocalAckTimeout();
        c.conn.peerResponseTimeout = req.localCmResponseTimeout();
        c.conn.peerMaxCmRetries = req.maxCmRetries();
        c.listener = l;
        engine.auth.indexRemote(c);
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
            engine.ended(c);
            return;
        }
        sendMra(c, CmMra.MSG_REQ);
    }

    void onMra(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        mra.wrap(mad);
        CmId id = mra.messageMraed() == CmMra.MSG_REQ
                ? engine.auth.forLocal(a, from.gid, MadHeader.ATTR_MRA, mra.remoteCommId(), mra.localCommId())
                : engine.auth.forBoth(a, from.gid, MadHeader.ATTR_MRA, mra.remoteCommId(), mra.localCommId());
        if (id == null) {
            return;
        }
        if (id.state == State.REQ_SENT && mra.messageMraed() == CmMra.MSG_REQ) {
            id.conn.remoteCommId = mra.localCommId();
            CmMad.releaseSlot(id); // the peer's agent has taken the REQ
            CmMad.schedule(id, CmMad.cmTimeNs(mra.serviceTimeout()) + CmMad.cmTimeNs(id.ackTimeout));
        } else if (id.state == State.REP_SENT && mra.messageMraed() == CmMra.MSG_REP) {
            // the slot stays until the RTU: it bounds the RTUs the peer's program can send at once
            CmMad.schedule(id, CmMad.cmTimeNs(mra.serviceTimeout()) + CmMad.cmTimeNs(id.ackTimeout));
        } else {
            engine.auth.drop(a, MadHeader.ATTR_MRA); // nothing waits for it: stale or forged
        }
    }

    void onRep(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        rep.wrap(mad);
        CmId id = engine.auth.forLocal(a, from.gid, MadHeader.ATTR_REP, rep.remoteCommId(), rep.localCommId());
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
            engine.auth.drop(a, MadHeader.ATTR_REP);
            return;
        }
        CmMad.cancelTimer(id);
        id.conn.remoteCommId = rep.localCommId();
        id.conn.remoteCaGuid = rep.localCaGuid();
        id.conn.remoteQpn = rep.localQpn();
        id.conn.remotePsn = rep.startingPsn();
        id.conn.responderResources = rep.initiatorDepth();
        id.conn.initiatorDepth = rep.responderResources();
        id.conn.rnrRetryCount = rep.rnrRetryCount();
        engine.auth.indexRemote(id);
        byte[] pd = rep.privateData();
        ConnParam param = new ConnParam().responderResources(rep.responderResources())
                .initiatorDepth(rep.initiatorDepth()).rnrRetryCount(rep.rnrRetryCount()).srq(rep.srq())
                .flowControl(rep.flowControl()).qpNum(rep.localQpn());
        if (id.qp == null) {
            id.state = State.REP_RCVD;
            engine.post(id, CmEventType.CONNECT_RESPONSE, 0, null, pd, param);
            return;
        }
        try {
            moveToRts(id, id.ackTimeout);
        } catch (RuntimeException e) {
            int errno = e instanceof VerbsException v ? v.errno() : Errno.EINVAL;
            sendRej(id, CmRej.REASON_CONSUMER_DEFINED, CmRej.MSG_REP, new byte[0]);
            qpToError(id);
            engine.post(id, CmEventType.CONNECT_ERROR, -errno, null, null, null);
            engine.ended(id);
            return;
        }
        sendRtu(id);
        id.state = State.ESTABLISHED;
        engine.post(id, CmEventType.ESTABLISHED, 0, null, pd, param);
    }

    void onRtu(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        rtu.wrap(mad);
        CmId id = engine.auth.forBoth(a, from.gid, MadHeader.ATTR_RTU, rtu.remoteCommId(), rtu.localCommId());
        if (id != null && id.state == State.REP_SENT) {
            CmMad.cancelTimer(id);
            id.state = State.ESTABLISHED;
            engine.post(id, CmEventType.ESTABLISHED, 0, null, rtu.privateData(), null);
        } else if (id != null) {
            engine.auth.drop(a, MadHeader.ATTR_RTU);
        }
    }

    void onRej(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        rej.wrap(mad);
        CmId id = engine.auth.forRej(a, from.gid, rej);
        if (id == null) {
            return;
        }
        switch (id.state) {
            case REQ_SENT, REP_RCVD, REQ_RCVD, REP_SENT -> {
                qpToError(id);
                engine.post(id, CmEventType.REJECTED, rej.reason(), null, rej.privateData(), null);
                engine.ended(id);
            }
            case ESTABLISHED, DREQ_SENT, DREQ_RCVD -> {
                // the peer dropped a connection we count as up (it was destroyed before our RTU came,
                // say): as cm.c, report the REJ and go through time wait
                CmMad.cancelTimer(id);
                qpToError(id);
                engine.post(id, CmEventType.REJECTED, rej.reason(), null, rej.privateData(), null);
                id.state = State.TIMEWAIT;
                CmMad.schedule(id, CmMad.cmTimeNs(id.ackTimeout));
            }
            default -> engine.auth.drop(a, MadHeader.ATTR_REJ);
        }
    }

    void onDreq(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        dreq.wrap(mad);
        long tid = MadHeader.transactionId(mad);
        CmId id = engine.auth.forBoth(a, from.gid, MadHeader.ATTR_DREQ, dreq.remoteCommId(), dreq.localCommId());
        if (id == null) {
            // unknown or long gone: answer so that the peer stops asking (cm.c does the same); nothing changes
            sendDrep(a, from.gid, dreq.remoteCommId(), dreq.localCommId(), tid);
            return;
        }
        if (!engine.auth.qpnMatches(a, id, dreq.remoteQpn())) {
            return;
        }
        switch (id.state) {
            case ESTABLISHED, REP_SENT, REP_RCVD -> {
                // as cm.c and cma.c: DISCONNECTED now; the QP stays as it is and the DREP goes when the
                // program calls disconnect or destroys the id
                CmMad.cancelTimer(id);
                id.conn.tid = tid;
                id.state = State.DREQ_RCVD;
                engine.post(id, CmEventType.DISCONNECTED, 0, null, dreq.privateData(), null);
            }
            case DREQ_SENT -> { // both sides asked: the program has already called disconnect
                CmMad.cancelTimer(id);
                sendDrep(a, id.dgid, id.conn.localCommId, id.conn.remoteCommId, tid);
                enterTimewait(id, 0, dreq.privateData());
            }
            case TIMEWAIT -> sendDrep(a, id.dgid, id.conn.localCommId, id.conn.remoteCommId, tid);
            case DREQ_RCVD -> { // a repeated DREQ: the program has not answered yet
            }
            default -> engine.auth.drop(a, MadHeader.ATTR_DREQ);
        }
    }

    void onDrep(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        drep.wrap(mad);
        CmId id = engine.auth.forBoth(a, from.gid, MadHeader.ATTR_DREP, drep.remoteCommId(), drep.localCommId());
        if (id != null && id.state == State.DREQ_SENT) {
            CmMad.cancelTimer(id);
            enterTimewait(id, 0, drep.privateData());
        } else if (id != null) {
            engine.auth.drop(a, MadHeader.ATTR_DREP);
        }
    }
}
