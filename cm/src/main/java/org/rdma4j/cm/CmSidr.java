// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.rdma4j.cm.CmQpAttrs.ahAttr;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.rdma4j.cm.CmId.State;
import org.rdma4j.cm.wire.CmaHeader;
import org.rdma4j.cm.wire.MadHeader;
import org.rdma4j.cm.wire.ServiceId;
import org.rdma4j.cm.wire.SidrRep;
import org.rdma4j.cm.wire.SidrReq;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * Service ID resolution for UD ids (RDMA_PS_UDP), as cm.c's SIDR handlers: the active side's SIDR_REQ
 * and its answer, the passive side's CONNECT_REQUEST from a SIDR_REQ and the SIDR_REP that accepts or
 * rejects it. Guarded by the engine's lock.
 */
final class CmSidr {
    private final CmEngine engine;
    private final SidrReq sidrReq = new SidrReq();
    private final SidrRep sidrRep = new SidrRep();

    CmSidr(CmEngine engine) {
        this.engine = engine;
    }

    void connect(CmId id, ConnParam p) {
        p.checkPrivateData(ConnParam.MAX_SIDR_REQ_PRIVATE_DATA, CmWords.where("connect (UD) to", id.remote, id.local));
        id.conn.localCommId = engine.auth.newLocalId(id);
        id.conn.tid = CmProtocol.newTid(id);
        MemorySegment m = id.agent.tx;
        sidrReq.wrap(m).clearAndInit(id.conn.tid);
        sidrReq.requestId(id.conn.localCommId).pkey(0xFFFF).serviceId(id.ps.serviceId(id.remote.getPort()));
        CmaHeader.write(m, SidrReq.PRIVATE_DATA_OFFSET, id.local.getAddress(), id.local.getPort(),
                id.remote.getAddress());
        byte[] user = p.rawPrivateData();
        MemorySegment.copy(user, 0, m, ValueLayout.JAVA_BYTE, SidrReq.PRIVATE_DATA_OFFSET + CmaHeader.LENGTH,
                user.length);
        id.state = State.REQ_SENT;
        id.conn.retriesLeft = id.maxCmRetries;
        CmMad.sendRequest(id, CmMad.cmTimeNs(id.responseTimeout) + CmMad.cmTimeNs(id.ackTimeout));
    }

    void sendRep(CmId id, int status, byte[] pd, int qpn) {
        sidrRep.wrap(id.agent.tx).clearAndInit(id.conn.tid);
        sidrRep.requestId(id.conn.remoteCommId).status(status).qpn(qpn).serviceId(id.ps.serviceId(id.local.getPort()))
                .qkey(CmId.UDP_QKEY).setPrivateData(pd, 0, pd.length);
        CmMad.sendAndRemember(id); // a repeated SIDR_REQ gets the same answer
    }

    void onReq(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        sidrReq.wrap(mad);
        long tid = MadHeader.transactionId(mad);
        CmId dup = engine.auth.byRemote(from.gid, sidrReq.requestId());
        if (dup != null) {
            if (dup.state != State.REQ_RCVD && dup.conn.lastMad != null) {
                CmMad.resend(dup);
            }
            return;
        }
        long sid = sidrReq.serviceId();
        InetAddress dstAddr = CmaHeader.dstAddress(mad, SidrReq.PRIVATE_DATA_OFFSET);
        CmId l = engine.ports.findListener(ServiceId.portSpace(sid), ServiceId.port(sid), dstAddr);
        if (l == null || l.ps != PortSpace.UDP || l.pendingRequests >= l.backlog) {
            sidrRep.wrap(a.tx).clearAndInit(tid);
            sidrRep.requestId(sidrReq.requestId()).serviceId(sid)
                    .status(l == null || l.ps != PortSpace.UDP ? SidrRep.STATUS_UNSUPPORTED : SidrRep.STATUS_REJECT);
            a.send(from.gid);
            return;
        }
        CmId c = CmId.child(l);
        c.responseTimeout = l.responseTimeout;
        c.maxCmRetries = l.maxCmRetries;
        c.ackTimeout = l.ackTimeout;
        Device dev = a.context.device(); // not Verbs.device: a provider lookup per MAD, under the lock
        engine.devices.attachRequest(c, a, dev);
        c.gidIndex = a.gidIndex;
        c.sgid = a.context.queryGid(a.portNum, a.gidIndex);
        c.conn.caGuid = dev.guid();
        c.dgid = from.gid;
        c.conn.remoteCommId = sidrReq.requestId();
        c.conn.tid = tid;
        c.listener = l;
        InetAddress srcAddr = CmaHeader.srcAddress(mad, SidrReq.PRIVATE_DATA_OFFSET);
        int srcPort = CmaHeader.port(mad, SidrReq.PRIVATE_DATA_OFFSET);
        c.local = new InetSocketAddress(dstAddr != null ? dstAddr : c.sgid.toInetAddress(), ServiceId.port(sid));
        c.remote = new InetSocketAddress(srcAddr != null ? srcAddr : from.gid.toInetAddress(), srcPort);
        engine.auth.indexRemote(c);
        byte[] pd = new byte[CmaHeader.SIDR_REQ_USER_DATA_LENGTH];
        MemorySegment.copy(mad, ValueLayout.JAVA_BYTE, SidrReq.PRIVATE_DATA_OFFSET + CmaHeader.LENGTH, pd, 0, pd.length);
        c.state = State.REQ_RCVD;
        l.pendingRequests++;
        if (!c.channel.post(new CmEvent(c.channel, CmEventType.CONNECT_REQUEST, 0, c, l, pd, null, ahAttr(c), 0))) {
            l.pendingRequests--;
            sendRep(c, SidrRep.STATUS_REJECT, new byte[0], 0);
            c.userClosed = true;
            engine.ended(c);
        }
    }

    void onRep(CmAgent a, MemorySegment mad, GsiPort.Source from) {
        sidrRep.wrap(mad);
        CmId id = engine.auth.forLocal(a, from.gid, MadHeader.ATTR_SIDR_REP, sidrRep.requestId(), 0);
        if (id != null && (id.state != State.REQ_SENT || id.ps != PortSpace.UDP)) {
            engine.auth.drop(a, MadHeader.ATTR_SIDR_REP);
        }
        if (id == null || id.state != State.REQ_SENT || id.ps != PortSpace.UDP) {
            return;
        }
        CmMad.cancelTimer(id);
        byte[] pd = sidrRep.privateData();
        if (sidrRep.status() != SidrRep.STATUS_SUCCESS) {
            engine.post(id, CmEventType.UNREACHABLE, sidrRep.status(), null, pd, null);
            engine.ended(id);
            return;
        }
        id.conn.remoteQpn = sidrRep.qpn();
        engine.unindex(id); // resolved: nothing more comes for this request
        id.state = State.ESTABLISHED;
        if (!id.userClosed) {
            id.channel.post(new CmEvent(id.channel, CmEventType.ESTABLISHED, 0, id, null, pd,
                    new ConnParam().qpNum(id.conn.remoteQpn), ahAttr(id), sidrRep.qkey()));
        }
    }
}
