// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.CqPoller;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.IdleStrategy;
import org.rdma4j.verbs.LinkLayer;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpEndpoint;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.QueuePairBuilder;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The guided bring-up ({@link QueuePairBuilder}, {@link PreparedQueuePair}, {@link QpEndpoint}),
 * {@code modify(QpAttr)} with the mask the attributes recorded, and the CQ waits with a timeout,
 * on the provider under test.
 */
@Rule({"S-API-1", "S-API-2", "S-API-3"})
public class GuidedBringUpConformanceTest extends AbstractVerbsTest {
    private static final long TIMEOUT_NS = TIMEOUT_MS * 1_000_000L;

    /** One side: a PD and CQ on {@code c} and a QP of {@code type} prepared by the builder's defaults. */
    private record Side(ProtectionDomain pd, CompletionQueue cq, PreparedQueuePair prepared) {
        QueuePair qp() {
            return prepared.qp();
        }
    }

    private Side prepare(Context c, QpType type) {
        ProtectionDomain pd = allocPd(c);
        CompletionQueue cq = createCq(c, 32);
        PreparedQueuePair p = pd.queuePair(type, cq).prepare();
        track(p.qp());
        return new Side(pd, cq, p);
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void prepareCreatesTheQpInInit(QpType type) {
        Side a = prepare(ctx, type);
        assertEquals(QpState.INIT, a.qp().state());
        assertEquals(QpState.INIT, a.qp().query().qpState);
        QpEndpoint e = a.prepared().endpoint();
        assertEquals(type, e.type());
        assertEquals(a.qp().qpn(), e.qpn());
        assertEquals(ctx.queryGid(1, a.prepared().gidIndex()), e.gid());
        assertTrue(e.mtu().bytes() <= portAttr().activeMtu().bytes(), e::toString);
    }

    @ParameterizedTest
    @EnumSource(value = QpType.class, names = {"RC", "UC"})
    void handshakeYieldsRtsConnectedAsTheEndpointsSay(QpType type) {
        Side a = prepare(ctx, type);
        Side b = prepare(peer(), type);
        QpEndpoint ea = a.prepared().endpoint();
        QpEndpoint eb = b.prepared().endpoint();
        QueuePair qa = a.prepared().handshake(eb);
        b.prepared().handshake(ea);
        assertEquals(QpState.RTS, qa.state());
        QpAttr attr = qa.query();
        assertEquals(QpState.RTS, attr.qpState);
        assertEquals(eb.qpn(), attr.destQpNum);
        assertEquals(eb.psn(), attr.rqPsn);
        assertEquals(ea.psn(), attr.sqPsn);
        assertEquals(Math.min(ea.mtu().bytes(), eb.mtu().bytes()), attr.pathMtu.bytes());
        assertEquals(eb.gid(), attr.ahAttr.grh().dgid());
        assertEquals(a.prepared().gidIndex(), attr.ahAttr.grh().sgidIndex());
        assertEquals(QpState.RTS, b.qp().query().qpState);
        org.junit.jupiter.api.Assumptions.assumeTrue(type != QpType.UC || !lossyLink(),
                "the pair is checked; its WRITE is not: UC never retransmits, and this link loses packets");
        writeAndCheck(a, b);
    }

    /** A WRITE (with immediate, so UC shows arrival too) from a to b lands and both sides complete. */
    private void writeAndCheck(Side a, Side b) {
        MemoryRegion src = register(a.pd(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(b.pd(), PAGE_SIZE, MR_ALL);
        fillPattern(src.segment(), 0, 512, 7);
        b.qp().postRecv(new RecvWorkRequest().wrId(2));
        a.qp().postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(src, 0, 512)
                .writeWithImm(addr(dst, 1024), dst.rkey(), 0x1234));
        WorkCompletion sent = new CqPoller(a.cq()).takeSuccess(TIMEOUT_NS);
        assertEquals(WcOpcode.RDMA_WRITE, sent.opcode());
        WorkCompletion received = new CqPoller(b.cq()).takeSuccess(TIMEOUT_NS);
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, received.opcode());
        assertEquals(0x1234, received.immData());
        assertPattern(dst.segment(), 1024, 512, 7, "written through the guided pair");
    }

    @Test
    void endpointsExchangedAsTextAndBytesConnectTheSame() {
        Side a = prepare(ctx, QpType.RC);
        Side b = prepare(peer(), QpType.RC);
        a.prepared().handshake(QpEndpoint.parse(b.prepared().endpoint().toString()));
        b.prepared().handshake(QpEndpoint.fromBytes(a.prepared().endpoint().toBytes()));
        writeAndCheck(a, b);
    }

    @Test
    @Requires(value = Capability.RELIABLE_LINK, why = "one UD datagram, never retransmitted, must arrive")
    void udHandshakeNeedsNoRemoteAndRouteToAddressesThePeer() {
        Side a = prepare(ctx, QpType.UD);
        Side b = prepare(peer(), QpType.UD);
        QueuePair qa = a.prepared().handshake();
        b.prepared().handshake(a.prepared().endpoint());
        assertEquals(QpState.RTS, qa.query().qpState);
        assertEquals(QpState.RTS, b.qp().query().qpState);
        QpEndpoint eb = b.prepared().endpoint();
        assertEquals(QueuePairBuilder.DEFAULT_QKEY, eb.qkey());
        MemoryRegion src = register(a.pd(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(b.pd(), PAGE_SIZE, MR_ALL);
        fillPattern(src.segment(), 0, 100, 3);
        b.qp().postRecv(new RecvWorkRequest().wrId(2).sge(dst, 0, 40 + 100));
        AddressHandle ah = track(a.pd().createAh(a.prepared().routeTo(eb)));
        qa.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(src, 0, 100).send()
                .ud(ah, eb.qpn(), eb.qkey()));
        new CqPoller(a.cq()).takeSuccess(TIMEOUT_NS);
        assertEquals(40 + 100, new CqPoller(b.cq()).takeSuccess(TIMEOUT_NS).byteLen(), "GRH and payload");
        assertPattern(dst.segment(), 40, 100, 3, "the datagram");
    }

    @Test
    void handshakeWithAnEndpointOfAnotherTypeFailsEinvalAndLeavesInit() {
        Side a = prepare(ctx, QpType.RC);
        Side ud = prepare(peer(), QpType.UD);
        VerbsException e = assertThrows(VerbsException.class, () -> a.prepared().handshake(ud.prepared().endpoint()));
        assertEquals(Errno.EINVAL, e.errno());
        assertEquals(QpState.INIT, a.qp().query().qpState);
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> a.prepared().handshake()).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> a.prepared().handshake(null)).errno());
        assertEquals(QpState.INIT, a.qp().query().qpState);
    }

    @Test
    void handshakeWithoutAGidOnRoceFailsEinval() {
        assumeTrue(portAttr().linkLayer() == LinkLayer.ETHERNET, "RoCE only");
        Side a = prepare(ctx, QpType.RC);
        QpEndpoint real = prepare(peer(), QpType.RC).prepared().endpoint();
        QpEndpoint noGid = new QpEndpoint(QpType.RC, real.lid(), real.qpn(), real.psn(), Gid.ZERO, real.mtu(), 0);
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> a.prepared().handshake(noGid)).errno());
        assertEquals(QpState.INIT, a.qp().query().qpState);
    }

    @Test
    void theDefaultGidIndexIsARoutableRoceV2AddressWhenThereIsOne() {
        int index = QueuePairBuilder.defaultGidIndex(ctx, 1);
        GidEntry chosen = ctx.queryGidEntry(1, index);
        assertTrue(!chosen.gid().isZero(), "an empty entry was chosen");
        boolean anyRoutable = false;
        for (int i = 0; i < portAttr().gidTblLen(); i++) {
            try {
                GidEntry e = ctx.queryGidEntry(1, i);
                anyRoutable |= e.type() == GidEntry.GidType.ROCE_V2 && !e.gid().isZero() && !linkLocal(e.gid());
            } catch (VerbsException ex) {
                assertEquals(Errno.ENODATA, ex.errno());
            }
        }
        if (anyRoutable) {
            assertEquals(GidEntry.GidType.ROCE_V2, chosen.type());
            assertTrue(!linkLocal(chosen.gid()), () -> "link-local " + chosen + " chosen over a routable entry");
        }
        Side a = prepare(ctx, QpType.RC);
        assertEquals(index, a.prepared().gidIndex());
    }

    private static boolean linkLocal(Gid g) {
        return g.byteAt(0) == (byte) 0xFE && (g.byteAt(1) & 0xC0) == 0x80;
    }

    @Test
    void anExplicitMtuBelowThePortsIsWhatThePairUses() {
        QueuePairBuilder small = allocPd(ctx).queuePair(QpType.RC, createCq(ctx, 8)).mtu(Mtu.MTU_256);
        PreparedQueuePair a = small.prepare();
        track(a.qp());
        Side b = prepare(peer(), QpType.RC);
        assertEquals(Mtu.MTU_256, a.endpoint().mtu());
        b.prepared().handshake(a.endpoint());
        assertEquals(Mtu.MTU_256, b.qp().query().pathMtu);
    }

    // ---------------------------------------------------------------- modify(QpAttr)

    @Test
    void modifyWithQpAttrAppliesExactlyTheAttributesSet() {
        QueuePair qp = createQp(allocPd(ctx), QpType.RC);
        qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(Access.REMOTE_WRITE));
        assertEquals(QpState.INIT, qp.query().qpState);
        assertEquals(Access.REMOTE_WRITE, qp.query().qpAccessFlags);
        // INIT -> INIT accepts ACCESS_FLAGS alone; the untouched fields keep their values
        qp.modify(new QpAttr().state(QpState.INIT).accessFlags(Access.REMOTE_READ));
        assertEquals(Access.REMOTE_READ, qp.query().qpAccessFlags);
        // a field set directly records no bit: the change is not applied
        QpAttr direct = new QpAttr().state(QpState.INIT);
        direct.qpAccessFlags = Access.REMOTE_ATOMIC;
        qp.modify(direct);
        assertEquals(Access.REMOTE_READ, qp.query().qpAccessFlags);
    }

    @Test
    void modifyWithQpAttrMissingARequiredAttributeFailsEinval() {
        QueuePair qp = createQp(allocPd(ctx), QpType.RC);
        QpAttr noPort = new QpAttr().state(QpState.INIT).pkeyIndex(0).accessFlags(0);
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> qp.modify(noPort)).errno());
        assertEquals(QpState.RESET, qp.query().qpState);
    }

    @Test
    void modifyWithQpAttrCarryingAnAttributeTheTransitionRefusesFailsEinval() {
        QueuePair qp = createQp(allocPd(ctx), QpType.RC);
        QpAttr extra = new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(0).sqPsn(5);
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> qp.modify(extra)).errno());
        assertEquals(QpState.RESET, qp.query().qpState);
    }

    @Test
    void modifyWithQpAttrMatchesTheRawCallWithTheSameMask() {
        QueuePair viaAttr = createQp(allocPd(ctx), QpType.UD);
        QueuePair raw = createQp(allocPd(ctx), QpType.UD);
        QpAttr a = new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).qkey(0x2222);
        viaAttr.modify(a);
        raw.modify(a, a.mask());
        assertEquals(raw.query().qkey, viaAttr.query().qkey);
        assertEquals(0x2222, viaAttr.query().qkey);
    }

    // ---------------------------------------------------------------- waiting on a CQ

    @Test
    void pollWithATimeoutOnAnIdleCqReturnsZero() {
        CompletionQueue cq = createCq(ctx, 4);
        assertEquals(0, cq.poll(WorkCompletion.array(2), IdleStrategy.backoff(), 5_000_000L));
        assertEquals(0, cq.poll(WorkCompletion.array(2), IdleStrategy.busySpin(), 0));
        assertNull(new CqPoller(cq).poll(1_000_000L));
        VerbsException e = assertThrows(VerbsException.class, () -> new CqPoller(cq, 1, IdleStrategy.yielding())
                .take(1_000_000L));
        assertEquals(Errno.ETIMEDOUT, e.errno());
    }

    @Test
    void pollWithATimeoutReturnsTheCompletionsThatArrive() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < 3; i++) {
            p.a().qp().postSend(new SendWorkRequest().wrId(10 + i).flags(SendFlag.SIGNALED).sge(src, 0, 64)
                    .write(addr(dst, 64L * i), dst.rkey()));
        }
        WorkCompletion[] wcs = WorkCompletion.array(3);
        int got = 0;
        while (got < 3) {
            WorkCompletion[] rest = WorkCompletion.array(3 - got);
            int n = p.a().sendCq().poll(rest, IdleStrategy.sleeping(100_000L), TIMEOUT_NS);
            assertNotEquals(0, n, "no completion within the timeout");
            for (int i = 0; i < n; i++) {
                wcs[got++] = rest[i];
            }
        }
        for (int i = 0; i < 3; i++) {
            assertTrue(wcs[i].isSuccess(), wcs[i]::toString);
            assertEquals(10 + i, wcs[i].wrId());
        }
    }

    @Test
    void aQpCreatedElsewhereCanBePreparedFromReset() {
        ProtectionDomain pd = allocPd(ctx);
        CompletionQueue cq = createCq(ctx, 8);
        QueuePair qp = createQp(pd, new QpInitAttr(QpType.RC, cq, cq));
        PreparedQueuePair p = pd.queuePair(QpType.RC, cq).prepare(qp);
        assertEquals(QpState.INIT, qp.query().qpState);
        assertEquals(qp, p.qp());
    }
}
