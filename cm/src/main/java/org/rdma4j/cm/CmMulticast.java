// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import org.rdma4j.cm.CmId.State;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.VerbsException;

/**
 * rdma_join_multicast / rdma_leave_multicast for the engine's (QP1) ids, as the kernel's rdma_cm does
 * them on RoCEv2, where no subnet administrator is asked: the MGID is the group's IP address (an IPv4
 * group as ::ffff:a.b.c.d, an IPv6 group as itself), the MLID 0, the Q_Key of RDMA_PS_UDP ids
 * {@link CmId#UDP_QKEY}, the hop limit 64 (IPV6_DEFAULT_HOPLIMIT). The join completes at once:
 * MULTICAST_JOIN with the address handle attributes a sender needs (QPN 0xFFFFFF), after the id's QP
 * (if it has one, and unless send-only) was attached to the group as librdmacm does on that event; an
 * attach that fails turns it into MULTICAST_ERROR with the negative errno. Every method runs under
 * the engine's lock.
 */
final class CmMulticast {
    /** The destination QPN of a multicast send (and the event's ud qp_num). */
    static final int MULTICAST_QPN = 0xFF_FFFF;
    /** The hop limit rdma_cm gives RoCEv2 groups. */
    static final int HOP_LIMIT = 64;

    /** One joined group of an id. */
    record Join(InetAddress group, Gid mgid, boolean sendOnly, Object context, boolean attached) {
    }

    private CmMulticast() {
    }

    /** {@return the MGID rdma_cm uses on RoCEv2 for {@code group}} */
    static Gid mgid(InetAddress group) {
        return Gid.of(group); // IPv4: the IPv4-mapped GID; IPv6: the address itself
    }

    static void join(CmEngine engine, CmId id, InetAddress group, MulticastJoinFlag flag, Object context) {
        if (id.userClosed) {
            throw CmWords.closed(id, "join multicast group " + group.getHostAddress() + " from");
        }
        if (id.ps != PortSpace.UDP) {
            throw new VerbsException(Errno.EINVAL, "join multicast group: only UD ids (RDMA_PS_UDP) join, this one is "
                    + id.ps);
        }
        if (!group.isMulticastAddress()) {
            throw new VerbsException(Errno.EINVAL, "join multicast group " + group.getHostAddress() + ": not a multicast address");
        }
        if (id.context == null || id.sgid == null
                || id.state != State.ADDR_BOUND && id.state != State.ADDR_RESOLVED) {
            throw new VerbsException(Errno.EINVAL, "join multicast group " + group.getHostAddress() + ": needs an id "
                    + "bound to a device (bind to a local address or resolve the group first), not one in state " + id.state);
        }
        if (id.sgid.isIpv4Mapped() != (group instanceof Inet4Address)) {
            throw new VerbsException(Errno.EINVAL, "join multicast group " + group.getHostAddress()
                    + ": not of the IP version of the id's address " + id.sgid.toInetAddress().getHostAddress());
        }
        for (Join j : id.joins) {
            if (j.group().equals(group)) {
                throw new VerbsException(Errno.EADDRINUSE, "join multicast group " + group.getHostAddress() + ": joined already");
            }
        }
        Gid mgid = mgid(group);
        boolean sendOnly = flag == MulticastJoinFlag.SEND_ONLY_FULL_MEMBER;
        QueuePair qp = id.qp;
        boolean attach = qp != null && !qp.isClosed() && !sendOnly;
        if (attach) {
            try {
                qp.attachMcast(mgid, 0);
            } catch (VerbsException e) {
                // as librdmacm: the join went through, the attach on its event failed
                id.channel.post(new CmEvent(id.channel, CmEventType.MULTICAST_ERROR, -e.errno(), id, null, null,
                        null, null, 0, context));
                return;
            }
        }
        id.joins.add(new Join(group, mgid, sendOnly, context, attach));
        AhAttr ah = new AhAttr(new GlobalRoute(mgid, 0, id.gidIndex, HOP_LIMIT, 0), 0, 0, 0, 0, id.portNum);
        id.channel.post(new CmEvent(id.channel, CmEventType.MULTICAST_JOIN, 0, id, null, null,
                new ConnParam().qpNum(MULTICAST_QPN), ah, CmId.UDP_QKEY, context));
    }

    static void leave(CmId id, InetAddress group) {
        if (id.userClosed) {
            throw CmWords.closed(id, "leave multicast group " + group.getHostAddress() + " from");
        }
        for (int i = 0; i < id.joins.size(); i++) {
            Join j = id.joins.get(i);
            if (j.group().equals(group)) {
                id.joins.remove(i);
                detach(id, j);
                return;
            }
        }
        throw new VerbsException(Errno.EADDRNOTAVAIL, "leave multicast group " + group.getHostAddress() + ": the id has not joined it");
    }

    /** Leaves every group (the id or its QP goes away): its QP is detached so that it can be destroyed. */
    static void leaveAll(CmId id) {
        if (id.joins.isEmpty()) {
            return;
        }
        List<Join> all = new ArrayList<>(id.joins);
        id.joins.clear();
        for (Join j : all) {
            detach(id, j);
        }
    }

    private static void detach(CmId id, Join j) {
        QueuePair qp = id.qp;
        if (j.attached() && qp != null && !qp.isClosed()) {
            try {
                qp.detachMcast(j.mgid(), 0);
            } catch (VerbsException e) {
                // already detached by the program itself: nothing left to undo
            }
        }
    }
}
