// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * rdma_join_multicast / rdma_leave_multicast on UD ids of soft devices (RoCEv2: the MGID is the group's IP);
 * the subclasses choose the devices.
 */
abstract class CmMulticastCases extends CmTestSupport {
    @AfterAll
    static void removeDevices() {
        tearDownDevices();
    }

    @AfterEach
    void agentsGoWithTheirLastId() throws InterruptedException {
        awaitNoAgents();
    }

    /** A UD id bound to {@code addr}, with a QP (receives posted) on its device. */
    private static final class Member implements AutoCloseable {
        final CmId id;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final MemoryRegion mr;
        final QueuePair qp;

        Member(CmEventChannel ch, InetAddress addr) {
            id = ch.createId(PortSpace.UDP);
            id.bindAddr(new InetSocketAddress(addr, 0));
            pd = id.context().allocPd();
            cq = id.context().createCq(16);
            mr = pd.regMr(Arena.ofShared().allocate(4096), Access.LOCAL_WRITE);
            qp = id.createQp(pd, new QpInitAttr(QpType.UD, cq, cq));
            for (int i = 0; i < 4; i++) {
                qp.postRecv(new RecvWorkRequest().wrId(i).sge(mr, 1024 + i * 256, 40 + 64));
            }
        }

        WorkCompletion poll() {
            WorkCompletion[] slot = WorkCompletion.array(1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (cq.poll(slot, 1) != 1) {
                if (System.nanoTime() - deadline > 0) {
                    return org.junit.jupiter.api.Assertions.fail("no completion");
                }
                Thread.onSpinWait();
            }
            WorkCompletion wc = new WorkCompletion();
            wc.copyFrom(slot[0]);
            return wc;
        }

        /** {@return the completion polled now, or null: nothing arrived} */
        WorkCompletion pollNow() {
            WorkCompletion[] slot = WorkCompletion.array(1);
            return cq.poll(slot, 1) == 1 ? slot[0] : null;
        }

        String text(WorkCompletion wc) {
            return mr.segment().getString(1024 + wc.wrId() * 256 + 40, StandardCharsets.US_ASCII);
        }

        void send(CmEvent join, String text) {
            mr.segment().setString(0, text, StandardCharsets.US_ASCII);
            try (AddressHandle ah = pd.createAh(join.ahAttr())) {
                qp.postSend(new SendWorkRequest().wrId(99).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                        .sge(mr, 0, text.length() + 1).ud(ah, join.param().qpNum(), join.qkey()));
                WorkCompletion wc = poll();
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                assertEquals(99, wc.wrId());
            }
        }

        @Override
        public void close() {
            id.destroyQp();
            mr.close();
            cq.close();
            pd.close();
            id.close(); // last: the CM closes the device context it shares once its PDs and CQs are gone
        }
    }

    private static InetAddress group(String g) throws Exception {
        return InetAddress.getByName(g);
    }

    @Test
    void aJoinBringsTheGroupsAddressAndQkeyAndTwoMembersReceiveASendThatStopsAfterLeave() throws Exception {
        InetAddress g = group(ipA instanceof java.net.Inet4Address ? "239.7.7.1" : "ff0e::7:1");
        Object ctx1 = "first";
        try (CmEventChannel ch = new CmEventChannel(); Member r1 = new Member(ch, ipB);
             Member r2 = new Member(ch, ipB); Member s = new Member(ch, ipA)) {
            r1.id.joinMulticast(new InetSocketAddress(g, 0), ctx1);
            CmEvent j1 = expect(ch, CmEventType.MULTICAST_JOIN);
            assertSame(r1.id, j1.id());
            assertSame(ctx1, j1.context(), "the join's context comes back (rdma_ud_param.private_data)");
            assertEquals(0, j1.status());
            assertEquals(Gid.of(g), j1.ahAttr().grh().dgid(), "RoCE: the MGID is the group's address");
            assertEquals(CmId.UDP_QKEY, j1.qkey(), "RDMA_PS_UDP groups use RDMA_UDP_QKEY");
            assertEquals(0xFFFFFF, j1.param().qpNum());
            assertEquals(0, j1.ahAttr().dlid(), "no MLID on RoCE");
            assertEquals(64, j1.ahAttr().grh().hopLimit());
            assertEquals(r1.id.portNum(), j1.ahAttr().portNum());
            r2.id.joinMulticast(g, 2);
            assertEquals(2, expect(ch, CmEventType.MULTICAST_JOIN).context());
            s.id.joinMulticast(g, MulticastJoinFlag.SEND_ONLY_FULL_MEMBER, null);
            CmEvent js = expect(ch, CmEventType.MULTICAST_JOIN);
            assertSame(s.id, js.id());
            VerbsException notAttached = assertThrows(VerbsException.class, () -> s.qp.detachMcast(Gid.of(g), 0),
                    "a send-only member's QP is not attached");
            assertEquals(Errno.EINVAL, notAttached.errno());

            s.send(js, "to all");
            WorkCompletion w1 = r1.poll();
            assertEquals(WcStatus.SUCCESS, w1.status(), w1::toString);
            assertEquals(s.qp.qpn(), w1.srcQp());
            assertEquals("to all", r1.text(w1));
            WorkCompletion w2 = r2.poll();
            assertEquals(WcStatus.SUCCESS, w2.status(), w2::toString);
            assertEquals("to all", r2.text(w2));

            r1.id.leaveMulticast(new InetSocketAddress(g, 4791));
            assertThrows(VerbsException.class, () -> r1.qp.detachMcast(Gid.of(g), 0), "leave detached the QP");
            s.send(js, "after leave");
            WorkCompletion w3 = r2.poll();
            assertEquals("after leave", r2.text(w3));
            // r1 and r2 are QPs of one device: its copies are handed out in one pass, so r1 would have its own now
            assertNull(r1.pollNow(), "a member that left gets nothing");
            VerbsException again = assertThrows(VerbsException.class, () -> r1.id.leaveMulticast(g));
            assertEquals(99 /* EADDRNOTAVAIL */, again.errno());
        }
    }

    @Test
    void joinErrorsAreTheOnesRdmaCmGives() throws Exception {
        InetAddress g = group(ipA instanceof java.net.Inet4Address ? "239.7.7.2" : "ff0e::7:2");
        InetAddress otherFamily = group(ipA instanceof java.net.Inet4Address ? "ff0e::7:2" : "239.7.7.2");
        try (CmEventChannel ch = new CmEventChannel(); CmId tcp = ch.createId(PortSpace.TCP);
             CmId unbound = ch.createId(PortSpace.UDP); CmId ud = ch.createId(PortSpace.UDP)) {
            tcp.bindAddr(new InetSocketAddress(ipA, 0));
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> tcp.joinMulticast(g, null)).errno(),
                    "an RC id has no UD QP to attach");
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                    () -> unbound.joinMulticast(g, null)).errno(), "an id on no device");
            ud.bindAddr(new InetSocketAddress(ipA, 0));
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> ud.joinMulticast(ipB, null)).errno(),
                    "a unicast address");
            assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
                    () -> ud.joinMulticast(otherFamily, null)).errno(), "a group of the other IP version");
            assertEquals(99, assertThrows(VerbsException.class, () -> ud.leaveMulticast(g)).errno(), "not joined");
            ud.joinMulticast(g, null); // no QP yet: nothing to attach, the event still comes
            expect(ch, CmEventType.MULTICAST_JOIN);
            assertEquals(Errno.EADDRINUSE, assertThrows(VerbsException.class,
                    () -> ud.joinMulticast(g, null)).errno());
            ud.close();
            assertEquals(Errno.EBADF, assertThrows(VerbsException.class, () -> ud.joinMulticast(g, null)).errno());
            assertEquals(Errno.EBADF, assertThrows(VerbsException.class, () -> ud.leaveMulticast(g)).errno());
            assertNull(ch.getEvent(0, TimeUnit.SECONDS), "no further events");
        }
    }

    @Test
    void closingTheIdOrDestroyingItsQpLeavesTheGroups() throws Exception {
        InetAddress g = group(ipA instanceof java.net.Inet4Address ? "239.7.7.3" : "ff0e::7:3");
        try (CmEventChannel ch = new CmEventChannel()) {
            Member m = new Member(ch, ipA);
            m.id.joinMulticast(g, null);
            expect(ch, CmEventType.MULTICAST_JOIN);
            m.id.destroyQp(); // an attached QP could not be destroyed (EBUSY): the id detaches it first
            assertTrue(m.qp.isClosed());
            m.close();

            Member n = new Member(ch, ipA);
            n.id.joinMulticast(g, null);
            expect(ch, CmEventType.MULTICAST_JOIN);
            n.id.close();
            assertThrows(VerbsException.class, () -> n.qp.detachMcast(Gid.of(g), 0), "closing the id detached it");
            n.qp.close(); // not EBUSY
            n.close();
            try (CmId last = ch.createId(PortSpace.UDP)) {
                // n's id was closed while its PD lived, so the CM kept the device context: the next release closes it
                last.bindAddr(new InetSocketAddress(ipA, 0));
            }
        }
    }

    @Test
    void anAttachTheDeviceRefusesEndsTheJoinInMulticastErrorWithTheErrno() throws Exception {
        boolean v4 = ipA instanceof java.net.Inet4Address;
        int max;
        try (org.rdma4j.verbs.Context c = devA.open()) {
            max = c.queryDevice().maxMcastGrp();
        }
        try (CmEventChannel ch = new CmEventChannel(); Member m = new Member(ch, ipA)) {
            for (int i = 0; i < max; i++) {
                m.id.joinMulticast(group(v4 ? "239.8.0." + (i + 1) : "ff0e::8:" + Integer.toHexString(i + 1)), i);
                assertEquals(i, expect(ch, CmEventType.MULTICAST_JOIN).context());
            }
            InetAddress tooMany = group(v4 ? "239.8.1.1" : "ff0e::8:ffff");
            Object ctx = new Object();
            m.id.joinMulticast(tooMany, ctx);
            CmEvent e = expect(ch, CmEventType.MULTICAST_ERROR);
            assertSame(m.id, e.id());
            assertSame(ctx, e.context());
            assertEquals(-Errno.ENOMEM, e.status(), "the device's group limit (rxe's order: groups first)");
            assertNull(e.ahAttr());
            assertEquals(99, assertThrows(VerbsException.class, () -> m.id.leaveMulticast(tooMany)).errno(),
                    "a join that failed is not listed");
            m.id.leaveMulticast(group(v4 ? "239.8.0.1" : "ff0e::8:1"));
            m.id.joinMulticast(tooMany, ctx); // a group's room again
            assertSame(ctx, expect(ch, CmEventType.MULTICAST_JOIN).context());
        }
    }
}
