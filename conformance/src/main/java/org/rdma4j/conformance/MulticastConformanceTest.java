// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GlobalRoute;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.VerbsResource;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * SEMANTICS.md, Data path, "UD multicast" and Control path, "Limits": ibv_attach_mcast /
 * ibv_detach_mcast as uverbs and rxe answer them, and delivery of a send to QPN 0xFFFFFF with a
 * multicast GID to every attached QP of every device (and to no other).
 */
@Rule({"S-UD-6", "S-LIM-1"})
@Requires(value = {Capability.MULTICAST, Capability.RELIABLE_LINK},
        why = "the devices cannot join multicast groups on this link, or the link loses datagrams (UD never retransmits)")
public class MulticastConformanceTest extends AbstractDataPathTest {
    protected static final int GRH = 40;
    private static final int MCAST_QPN = 0xFFFFFF;
    private static final AtomicInteger NEXT_GROUP = new AtomicInteger(1);

    /** One UD QP brought up to RTS, with its PD, CQ and a receive buffer. */
    protected record UdQp(Context ctx, ProtectionDomain pd, CompletionQueue cq, QueuePair qp, MemoryRegion buf) {
    }

    /**
     * A multicast GID of the device's address family, new for each call so tests do not meet each
     * other's groups: IPv4-mapped 239.77.x.y for an IPv4 device (rxe joins the IPv4 group), else
     * {@code ff0e::4d:x:y}.
     */
    protected Gid newGroup(Context c) {
        int n = NEXT_GROUP.getAndIncrement();
        byte[] g = new byte[16];
        if (c.queryGid(1, gidIndex(c)).isIpv4Mapped()) {
            g[10] = (byte) 0xFF;
            g[11] = (byte) 0xFF;
            g[12] = (byte) 239;
            g[13] = 77;
            g[14] = (byte) (n >>> 8);
            g[15] = (byte) n;
        } else {
            g[0] = (byte) 0xFF;
            g[1] = 0x0E;
            g[11] = 0x4D;
            g[14] = (byte) (n >>> 8);
            g[15] = (byte) n;
        }
        return Gid.of(g);
    }

    protected UdQp udQp(Context c) {
        ProtectionDomain pd = allocPd(c);
        CompletionQueue cq = createCq(c, 64);
        QueuePair qp = createQp(pd, new QpInitAttr(QpType.UD, cq, cq));
        QpBringUp.toInit(qp, 0, DEFAULT_QKEY);
        QpBringUp.to(qp, QpState.RTR);
        QpBringUp.toRts(qp, 0, 0, 0, 0, 0);
        return new UdQp(c, pd, cq, qp, register(pd, 4096, MR_ALL));
    }

    /** Attaches and makes sure the attachment is gone before the QP is closed (EBUSY otherwise). */
    protected void attach(QueuePair qp, Gid group) {
        qp.attachMcast(group, 0);
        track(new VerbsResource() {
            private boolean closed;

            @Override
            public boolean isClosed() {
                return closed;
            }

            @Override
            public void close() {
                if (!closed && !qp.isClosed()) {
                    try {
                        qp.detachMcast(group, 0);
                    } catch (RuntimeException alreadyDetached) {
                        // the test detached it itself
                    }
                }
                closed = true;
            }
        });
    }

    /** Sends {@code len} pattern bytes from {@code from} to multicast {@code group}. */
    protected void sendToGroup(UdQp from, Gid group, int len, int seed, int qkey) {
        AddressHandle ah = track(from.pd().createAh(new AhAttr(
                new GlobalRoute(group, 0, gidIndex(from.ctx()), 1, 0), 0, 0, 0, 0, 1)));
        fillPattern(from.buf().segment(), 0, len, seed);
        from.qp().postSend(wr(seed, WrOpcode.SEND).sge(from.buf(), 0, len).ud(ah, MCAST_QPN, qkey));
        expect(from.cq(), seed, WcOpcode.SEND);
    }

    protected static void postRecv(UdQp q, long wrId, int len) {
        q.qp().postRecv(new RecvWorkRequest().wrId(wrId).sge(q.buf(), 1024, len + GRH));
    }

    protected void expectDelivered(UdQp q, long wrId, int len, int seed, UdQp sender) {
        WorkCompletion r = expect(q.cq(), wrId, WcOpcode.RECV);
        assertEquals(len + GRH, r.byteLen(), r::toString);
        assertEquals(sender.qp().qpn(), r.srcQp(), "src_qp");
        assertPattern(q.buf().segment(), 1024 + GRH, len, seed, "multicast payload");
    }

    @Test
    void twoQpsOnTwoDevicesBothReceiveOneMulticastSend() {
        Gid group = newGroup(ctx);
        UdQp sender = udQp(ctx);
        UdQp here = udQp(ctx);
        UdQp there = udQp(peer());
        attach(here.qp(), group);
        attach(there.qp(), group);
        postRecv(here, 1, 100);
        postRecv(there, 2, 100);
        postRecv(sender, 3, 100);
        sendToGroup(sender, group, 100, 31, DEFAULT_QKEY);
        expectDelivered(here, 1, 100, 31, sender);
        expectDelivered(there, 2, 100, 31, sender);
        assertNoCompletion(sender.cq(), "the sender is not attached");
    }

    @Test
    void everyAttachedQpOfADeviceReceivesItsOwnCopy() {
        Gid group = newGroup(ctx);
        UdQp sender = udQp(peer());
        List<UdQp> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            UdQp q = udQp(ctx);
            attach(q.qp(), group);
            postRecv(q, 10 + i, 64);
            members.add(q);
        }
        sendToGroup(sender, group, 64, 32, DEFAULT_QKEY);
        for (int i = 0; i < 3; i++) {
            expectDelivered(members.get(i), 10 + i, 64, 32, sender);
        }
    }

    @Test
    void aDetachedQpNoLongerReceives() {
        Gid group = newGroup(ctx);
        UdQp sender = udQp(ctx);
        UdQp stays = udQp(peer());
        UdQp leaves = udQp(peer());
        attach(stays.qp(), group);
        attach(leaves.qp(), group);
        leaves.qp().detachMcast(group, 0);
        postRecv(stays, 1, 64);
        postRecv(leaves, 2, 64);
        sendToGroup(sender, group, 64, 33, DEFAULT_QKEY);
        expectDelivered(stays, 1, 64, 33, sender);
        assertNoCompletion(leaves.cq(), "a detached QP must not receive");
    }

    @Test
    void aQpOfAnotherGroupOrOfNoneReceivesNothing() {
        Gid group = newGroup(ctx);
        Gid other = newGroup(ctx);
        UdQp sender = udQp(ctx);
        UdQp member = udQp(peer());
        UdQp elsewhere = udQp(peer());
        UdQp none = udQp(peer());
        attach(member.qp(), group);
        attach(elsewhere.qp(), other);
        postRecv(member, 1, 64);
        postRecv(elsewhere, 2, 64);
        postRecv(none, 3, 64);
        sendToGroup(sender, group, 64, 34, DEFAULT_QKEY);
        expectDelivered(member, 1, 64, 34, sender);
        assertNoCompletion(elsewhere.cq(), "a QP of another group must not receive");
        assertNoCompletion(none.cq(), "a QP of no group must not receive");
    }

    @Test
    void multicastWithTheWrongQkeyIsDropped() {
        Gid group = newGroup(ctx);
        UdQp sender = udQp(ctx);
        UdQp member = udQp(peer());
        attach(member.qp(), group);
        postRecv(member, 1, 64);
        sendToGroup(sender, group, 64, 35, DEFAULT_QKEY + 1);
        assertNoCompletion(member.cq(), "Q_Key is checked for multicast too");
        sendToGroup(sender, group, 64, 36, DEFAULT_QKEY);
        expectDelivered(member, 1, 64, 36, sender);
    }

    @Test
    void attachIsForUdQpsAndMulticastGidsOnly() {
        Gid group = newGroup(ctx);
        ProtectionDomain pd = allocPd(ctx);
        for (QpType t : new QpType[] {QpType.RC, QpType.UC}) {
            QueuePair qp = createQp(pd, t);
            assertErrno(Errno.EINVAL, () -> qp.attachMcast(group, 0));
            assertErrno(Errno.EINVAL, () -> qp.detachMcast(group, 0));
        }
        UdQp ud = udQp(ctx);
        Gid unicast = ctx.queryGid(1, gidIndex(ctx));
        assertErrno(Errno.EINVAL, () -> ud.qp().attachMcast(unicast, 0));
        assertErrno(Errno.EINVAL, () -> ud.qp().attachMcast(Gid.parse("::ffff:10.1.2.3"), 0));
    }

    @Test
    void attachingTwiceIsHarmlessAndDetachingWhatIsNotAttachedIsEinval() {
        Gid group = newGroup(ctx);
        UdQp sender = udQp(peer());
        UdQp q = udQp(ctx);
        assertErrno(Errno.EINVAL, () -> q.qp().detachMcast(group, 0));
        attach(q.qp(), group);
        q.qp().attachMcast(group, 0); // uverbs and rxe: already attached, nothing to do
        postRecv(q, 1, 64);
        postRecv(q, 2, 64);
        sendToGroup(sender, group, 64, 37, DEFAULT_QKEY);
        expectDelivered(q, 1, 64, 37, sender);
        assertNoCompletion(q.cq(), "attached twice still receives once");
        q.qp().detachMcast(group, 0);
        assertErrno(Errno.EINVAL, () -> q.qp().detachMcast(group, 0));
    }

    @Test
    void aQpWithAttachmentsCannotBeClosedUntilDetached() {
        Gid group = newGroup(ctx);
        UdQp q = udQp(ctx);
        q.qp().attachMcast(group, 0);
        assertErrno(Errno.EBUSY, () -> q.qp().close());
        assertEquals(QpState.RTS, q.qp().state(), "the refused close left the QP alone");
        q.qp().detachMcast(group, 0);
        q.qp().close();
        assertTrue(q.qp().isClosed());
    }

    @Test
    void addressHandleFromAMulticastReceiveIsEinval() {
        Gid group = newGroup(ctx);
        UdQp sender = udQp(peer());
        UdQp q = udQp(ctx);
        attach(q.qp(), group);
        postRecv(q, 1, 64);
        sendToGroup(sender, group, 64, 38, DEFAULT_QKEY);
        WorkCompletion r = expect(q.cq(), 1, WcStatus.SUCCESS);
        // ibv_init_ah_from_wc: "no point searching multicast GIDs in the GID table"
        assertErrno(Errno.EINVAL, () -> AhAttr.fromWc(ctx, 1, r, q.buf().segment().asSlice(1024, GRH)));
    }

    @Test
    void multicastLimitsAreAdvertisedAndEnforced() {
        DeviceAttr a = deviceAttr();
        assertTrue(a.maxMcastGrp() > 0 && a.maxMcastQpAttach() > 0 && a.maxTotalMcastQpAttach() > 0, a::toString);
        assumeTrue(a.maxMcastGrp() <= 64 && a.maxMcastQpAttach() <= 64 && a.maxTotalMcastQpAttach() <= 256
                && a.maxMcastGrp() <= a.maxTotalMcastQpAttach(), "limits too large to reach in a test");
        // Groups: one QP in max_mcast_grp groups; one more group is ENOMEM.
        UdQp one = udQp(ctx);
        List<Gid> groups = new ArrayList<>();
        for (int i = 0; i < a.maxMcastGrp(); i++) {
            groups.add(newGroup(ctx));
            attach(one.qp(), groups.get(i));
        }
        Gid extra = newGroup(ctx);
        assertErrno(Errno.ENOMEM, () -> one.qp().attachMcast(extra, 0));
        for (Gid g : groups) {
            one.qp().detachMcast(g, 0);
        }
        // QPs per group: max_mcast_qp_attach QPs in one group; one more is ENOMEM.
        int perGroup = Math.min(a.maxMcastQpAttach(), a.maxTotalMcastQpAttach());
        List<UdQp> qps = new ArrayList<>();
        for (int i = 0; i <= perGroup; i++) {
            qps.add(udQp(ctx));
        }
        Gid shared = newGroup(ctx);
        for (int i = 0; i < perGroup; i++) {
            attach(qps.get(i).qp(), shared);
        }
        assertErrno(Errno.ENOMEM, () -> qps.get(perGroup).qp().attachMcast(shared, 0));
        for (int i = 0; i < perGroup; i++) {
            qps.get(i).qp().detachMcast(shared, 0);
        }
        // Attachments in all: fill groups of max_mcast_qp_attach QPs up to the total; one more is ENOMEM.
        int total = a.maxTotalMcastQpAttach();
        int groupsNeeded = (total + perGroup - 1) / perGroup;
        assumeTrue(groupsNeeded < a.maxMcastGrp(), "max_total_mcast_qp_attach needs every group");
        List<Gid> filled = new ArrayList<>();
        int done = 0;
        for (int g = 0; done < total; g++) {
            Gid gid = newGroup(ctx);
            filled.add(gid);
            for (int i = 0; i < perGroup && done < total; i++, done++) {
                attach(qps.get(i).qp(), gid);
            }
        }
        Gid last = newGroup(ctx);
        assertErrno(Errno.ENOMEM, () -> qps.get(0).qp().attachMcast(last, 0));
    }
}
