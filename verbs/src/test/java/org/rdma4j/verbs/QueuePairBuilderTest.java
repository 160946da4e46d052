// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.spi.QpTransitions;

/** The builder's steps on a recording fake QP: which masks and attributes each modify carries. */
class QueuePairBuilderTest {
    record Modify(QpState to, int mask, QpAttr attr) { }

    private static final Gid LINK_LOCAL = Gid.parse("fe80::1");
    private static final Gid ULA = Gid.parse("fd00::7");
    private static final Gid V4 = Gid.parse("::ffff:10.0.0.7");
    private static final Gid REMOTE = Gid.parse("::ffff:10.0.0.9");

    private final List<Modify> modifies = new ArrayList<>();
    private QpState state = QpState.RESET;

    /** A context with one port whose GID table is {@code gids} (null = empty entry) and active MTU {@code mtu}. */
    private static Context context(Mtu mtu, LinkLayer link, GidEntry.GidType type, Gid... gids) {
        PortAttr port = new PortAttr(PortState.ACTIVE, Mtu.MTU_4096, mtu, gids.length, 0, 1L << 31, 0, 0, 1, 3, 0, 0,
                1, 0, 0, 0, 1, 1, 5, link);
        return (Context) Proxy.newProxyInstance(Context.class.getClassLoader(), new Class<?>[] {Context.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "queryPort" -> port;
                    case "queryGid", "queryGidEntry" -> {
                        int i = (Integer) args[1];
                        if (i < 0 || i >= gids.length) {
                            throw new VerbsException(Errno.EINVAL, "index");
                        }
                        if (gids[i] == null) {
                            throw new VerbsException(Errno.ENODATA, "empty");
                        }
                        yield m.getName().equals("queryGid") ? gids[i] : new GidEntry(i, 1, gids[i], type);
                    }
                    case "device" -> Proxy.newProxyInstance(Device.class.getClassLoader(), new Class<?>[] {Device.class},
                            (p, dm, da) -> "fake0");
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    private QueuePair qp(QpType type, Context ctx) {
        return (QueuePair) Proxy.newProxyInstance(QueuePair.class.getClassLoader(), new Class<?>[] {QueuePair.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "type" -> type;
                    case "qpn" -> 0x42;
                    case "context" -> ctx;
                    case "state" -> state;
                    case "modify" -> {
                        QpAttr a = (QpAttr) args[0];
                        int mask = (Integer) args[1];
                        String why = QpTransitions.check(type, state, a.qpState, mask);
                        if (why != null) {
                            throw new VerbsException(Errno.EINVAL, why);
                        }
                        modifies.add(new Modify(a.qpState, mask, a));
                        state = a.qpState;
                        yield null;
                    }
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    private static QueuePairBuilder builder(QpType type) {
        // the PD and CQs are not used by prepare(existing QP)
        ProtectionDomain pd = (ProtectionDomain) Proxy.newProxyInstance(ProtectionDomain.class.getClassLoader(),
                new Class<?>[] {ProtectionDomain.class}, (p, m, a) -> null);
        CompletionQueue cq = new CqPollerTest.FakeCq();
        return new QueuePairBuilder(pd, type, cq, cq).maxRdAtomic(4).maxDestRdAtomic(8);
    }

    private static int required(QpType t, QpState from, QpState to) {
        return QpAttrMask.STATE | QpTransitions.required(t, from, to);
    }

    @Test
    void rcHandshakeUsesExactlyTheMasksOfTheStateTable() {
        Context ctx = context(Mtu.MTU_1024, LinkLayer.ETHERNET, GidEntry.GidType.ROCE_V2, LINK_LOCAL, V4);
        PreparedQueuePair p = builder(QpType.RC).psn(0x100).prepare(qp(QpType.RC, ctx));
        QpEndpoint remote = new QpEndpoint(QpType.RC, 0, 0x77, 0x200, REMOTE, Mtu.MTU_4096, 0);
        p.handshake(remote);
        assertEquals(3, modifies.size());
        assertEquals(required(QpType.RC, QpState.RESET, QpState.INIT), modifies.get(0).mask());
        assertEquals(required(QpType.RC, QpState.INIT, QpState.RTR), modifies.get(1).mask());
        assertEquals(required(QpType.RC, QpState.RTR, QpState.RTS), modifies.get(2).mask());
        QpAttr rtr = modifies.get(1).attr();
        assertEquals(Mtu.MTU_1024, rtr.pathMtu, "the smaller MTU of both sides");
        assertEquals(0x77, rtr.destQpNum);
        assertEquals(0x200, rtr.rqPsn);
        assertEquals(REMOTE, rtr.ahAttr.grh().dgid());
        assertEquals(1, rtr.ahAttr.grh().sgidIndex(), "the IPv4-mapped GID, not the link-local one");
        assertEquals(8, rtr.maxDestRdAtomic);
        QpAttr rts = modifies.get(2).attr();
        assertEquals(0x100, rts.sqPsn);
        assertEquals(4, rts.maxRdAtomic);
        assertEquals(14, rts.timeout);
        assertEquals(QpState.RTS, state);
    }

    @Test
    void udNeedsNoRemoteAndCarriesItsQkey() {
        Context ctx = context(Mtu.MTU_4096, LinkLayer.ETHERNET, GidEntry.GidType.ROCE_V2, ULA);
        PreparedQueuePair p = builder(QpType.UD).qkey(0x1234).psn(5).prepare(qp(QpType.UD, ctx));
        QpEndpoint e = p.endpoint();
        assertEquals(0x1234, e.qkey());
        assertEquals(0x42, e.qpn());
        assertEquals(ULA, e.gid());
        assertEquals(Mtu.MTU_4096, e.mtu());
        p.handshake();
        assertEquals(required(QpType.UD, QpState.RESET, QpState.INIT), modifies.get(0).mask());
        assertEquals(0x1234, modifies.get(0).attr().qkey);
        assertEquals(required(QpType.UD, QpState.INIT, QpState.RTR), modifies.get(1).mask());
        assertEquals(required(QpType.UD, QpState.RTR, QpState.RTS), modifies.get(2).mask());
        assertEquals(QpState.RTS, state);
    }

    @Test
    void aWrongEndpointIsEinvalAndLeavesTheQpInInit() {
        Context ctx = context(Mtu.MTU_1024, LinkLayer.ETHERNET, GidEntry.GidType.ROCE_V2, V4);
        PreparedQueuePair p = builder(QpType.RC).prepare(qp(QpType.RC, ctx));
        QpEndpoint ud = new QpEndpoint(QpType.UD, 0, 0x77, 0, REMOTE, Mtu.MTU_1024, 1);
        QpEndpoint noGid = new QpEndpoint(QpType.RC, 0, 0x77, 0, Gid.ZERO, Mtu.MTU_1024, 0);
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> p.handshake(ud)).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> p.handshake(noGid)).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> p.handshake(null)).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, p::handshake).errno());
        assertEquals(QpState.INIT, state);
        assertEquals(1, modifies.size());
    }

    @Test
    void onInfinibandAZeroGidMeansALocalRouteWithoutGrh() {
        Context ctx = context(Mtu.MTU_2048, LinkLayer.INFINIBAND, GidEntry.GidType.IB, LINK_LOCAL);
        PreparedQueuePair p = builder(QpType.UC).prepare(qp(QpType.UC, ctx));
        assertEquals(3, p.endpoint().lid());
        p.handshake(new QpEndpoint(QpType.UC, 9, 0x77, 0, Gid.ZERO, Mtu.MTU_2048, 0));
        AhAttr av = modifies.get(1).attr().ahAttr;
        assertNull(av.grh());
        assertEquals(9, av.dlid());
        assertEquals(Access.REMOTE_WRITE, modifies.get(0).attr().qpAccessFlags);
    }

    @Test
    void aBuilderMtuAboveThePortsIsCappedAndBelowIsKept() {
        Context ctx = context(Mtu.MTU_1024, LinkLayer.ETHERNET, GidEntry.GidType.ROCE_V2, V4);
        assertEquals(Mtu.MTU_1024, builder(QpType.RC).mtu(Mtu.MTU_4096).prepare(qp(QpType.RC, ctx)).endpoint().mtu());
        state = QpState.RESET;
        assertEquals(Mtu.MTU_512, builder(QpType.RC).mtu(Mtu.MTU_512).prepare(qp(QpType.RC, ctx)).endpoint().mtu());
    }

    @Test
    void aQpOfAnotherTypeIsRefused() {
        Context ctx = context(Mtu.MTU_1024, LinkLayer.ETHERNET, GidEntry.GidType.ROCE_V2, V4);
        assertEquals(Errno.EINVAL,
                assertThrows(VerbsException.class, () -> builder(QpType.RC).prepare(qp(QpType.UD, ctx))).errno());
        assertTrue(modifies.isEmpty());
    }

    @Test
    void defaultGidIndexPrefersARoutableRoceV2Address() {
        assertEquals(2, QueuePairBuilder.defaultGidIndex(
                context(Mtu.MTU_1024, LinkLayer.ETHERNET, GidEntry.GidType.ROCE_V2, LINK_LOCAL, null, ULA, V4), 1));
        assertEquals(1, QueuePairBuilder.defaultGidIndex(
                context(Mtu.MTU_1024, LinkLayer.ETHERNET, GidEntry.GidType.ROCE_V2, null, V4, ULA), 1));
        assertEquals(1, QueuePairBuilder.defaultGidIndex(
                context(Mtu.MTU_1024, LinkLayer.ETHERNET, GidEntry.GidType.ROCE_V2, null, LINK_LOCAL), 1));
        assertEquals(0, QueuePairBuilder.defaultGidIndex(
                context(Mtu.MTU_1024, LinkLayer.INFINIBAND, GidEntry.GidType.IB, LINK_LOCAL, ULA), 1));
        VerbsException e = assertThrows(VerbsException.class, () -> QueuePairBuilder.defaultGidIndex(
                context(Mtu.MTU_1024, LinkLayer.ETHERNET, GidEntry.GidType.ROCE_V2, null, null), 1));
        assertEquals(Errno.ENODATA, e.errno());
    }

    @Test
    void anExplicitGidIndexWins() {
        Context ctx = context(Mtu.MTU_1024, LinkLayer.ETHERNET, GidEntry.GidType.ROCE_V2, LINK_LOCAL, V4);
        PreparedQueuePair p = builder(QpType.RC).gidIndex(0).prepare(qp(QpType.RC, ctx));
        assertEquals(0, p.gidIndex());
        assertEquals(LINK_LOCAL, p.endpoint().gid());
        assertSame(QpType.RC, p.endpoint().type());
    }
}
