// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Map;
import java.util.function.ToIntFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.LinkLayer;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.PortState;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/** SEMANTICS.md, Control path, "Device query": device, port, GID and P_Key queries; address handles. */
@Rule({"S-DEV-1", "S-DEV-2", "S-DEV-3", "S-DEV-4"})
public class DeviceConformanceTest extends AbstractVerbsTest {

    @Test
    void deviceHasNonZeroGuidsAndVendorId() {
        DeviceAttr a = deviceAttr();
        assertNotEquals(0L, a.nodeGuid(), "node_guid");
        assertNotEquals(0L, a.sysImageGuid(), "sys_image_guid");
        assertNotEquals(0, a.vendorId(), "vendor_id");
        assertNotEquals(0L, ctx.device().guid(), "ibv_get_device_guid");
    }

    static Stream<Arguments> limits() {
        // The EE/RDD/raw/FMR/multicast limits are legitimately 0 on RoCE devices (rxe reports 0).
        return Stream.of(
                limit("max_qp", DeviceAttr::maxQp),
                limit("max_qp_wr", DeviceAttr::maxQpWr),
                limit("max_sge", DeviceAttr::maxSge),
                limit("max_sge_rd", DeviceAttr::maxSgeRd),
                limit("max_cq", DeviceAttr::maxCq),
                limit("max_cqe", DeviceAttr::maxCqe),
                limit("max_mr", DeviceAttr::maxMr),
                limit("max_pd", DeviceAttr::maxPd),
                limit("max_qp_rd_atom", DeviceAttr::maxQpRdAtom),
                limit("max_res_rd_atom", DeviceAttr::maxResRdAtom),
                limit("max_qp_init_rd_atom", DeviceAttr::maxQpInitRdAtom),
                limit("max_mw", DeviceAttr::maxMw),
                limit("max_ah", DeviceAttr::maxAh),
                limit("max_srq", DeviceAttr::maxSrq),
                limit("max_srq_wr", DeviceAttr::maxSrqWr),
                limit("max_srq_sge", DeviceAttr::maxSrqSge),
                limit("max_pkeys", DeviceAttr::maxPkeys),
                limit("phys_port_cnt", DeviceAttr::physPortCnt),
                limit("num_comp_vectors", DeviceAttr::numCompVectors));
    }

    private static Arguments limit(String name, ToIntFunction<DeviceAttr> f) {
        return Arguments.of(name, f);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("limits")
    void deviceLimitIsPositive(String name, ToIntFunction<DeviceAttr> limit) {
        assertTrue(limit.applyAsInt(deviceAttr()) > 0, name + " must be > 0");
    }

    @Test
    void maxMrSizeExceedsPageSize() {
        // uint64_t in C: rxe reports ~0 (every bit set), which is -1 as a Java long
        assertTrue(Long.compareUnsigned(deviceAttr().maxMrSize(), PAGE_SIZE) > 0,
                "max_mr_size " + Long.toUnsignedString(deviceAttr().maxMrSize()));
    }

    @Test
    void deviceIsListedUnderItsName() {
        String name = ctx.device().name();
        assertEquals(name, Verbs.device(name).name());
        assertTrue(Verbs.devices().stream().anyMatch(d -> d.name().equals(name)), name + " not in Verbs.devices()");
    }

    @Test
    void port1IsActiveRoce() {
        PortAttr p = portAttr();
        assertEquals(PortState.ACTIVE, p.state(), "port state");
        assertEquals(LinkLayer.ETHERNET, p.linkLayer(), "link layer");
        assertNotNull(p.activeMtu(), "active_mtu");
        assertTrue(p.activeMtu().bytes() <= p.maxMtu().bytes(), "active_mtu <= max_mtu");
        assertTrue(p.gidTblLen() > 0, "gid_tbl_len");
        assertTrue(p.pkeyTblLen() > 0, "pkey_tbl_len");
        assertTrue(p.maxMsgSz() >= 1L << 16, "max_msg_sz " + p.maxMsgSz());
    }

    @Test
    void everyPortCanBeQueried() {
        for (int port = 1; port <= deviceAttr().physPortCnt(); port++) {
            assertNotNull(ctx.queryPort(port).state(), "port " + port);
        }
    }

    @Test
    void queryPortZeroFailsEinval() {
        assertErrno(Errno.EINVAL, () -> ctx.queryPort(0));
    }

    @Test
    void queryPortBeyondPortCountFailsEinval() {
        int n = deviceAttr().physPortCnt();
        assertErrno(Errno.EINVAL, () -> ctx.queryPort(n + 1));
    }

    @Test
    void connectionGidIsANonEmptyRoceV2Entry() {
        int i = gidIndex(ctx);
        Gid g = ctx.queryGid(1, i);
        assertFalse(g.isZero());
        GidEntry e = ctx.queryGidEntry(1, i);
        assertEquals(g, e.gid());
        assertEquals(i, e.index());
        assertEquals(1, e.portNum());
        assertEquals(GidEntry.GidType.ROCE_V2, e.type());
    }

    @Test
    void queryGidOfEmptyIndexFailsEnodata() {
        int len = portAttr().gidTblLen();
        int empty = -1;
        for (int i = 0; i < len && empty < 0; i++) {
            try {
                ctx.queryGid(1, i);
            } catch (VerbsException e) {
                assertEquals(Errno.name(Errno.ENODATA), Errno.name(e.errno()), "index " + i + ": " + e.getMessage());
                empty = i;
            }
        }
        assumeTrue(empty >= 0, "the GID table of port 1 is full");
        int index = empty;
        assertErrno(Errno.ENODATA, () -> ctx.queryGid(1, index));
        assertErrno(Errno.ENODATA, () -> ctx.queryGidEntry(1, index));
    }

    @Test
    void queryGidBeyondTableFailsEinval() {
        int len = portAttr().gidTblLen();
        assertErrno(Errno.EINVAL, () -> ctx.queryGid(1, len));
        assertErrno(Errno.EINVAL, () -> ctx.queryGid(1, -1));
    }

    @Test
    void queryGidOnMissingPortFailsEinval() {
        int n = deviceAttr().physPortCnt();
        assertErrno(Errno.EINVAL, () -> ctx.queryGid(n + 1, 0));
        assertErrno(Errno.EINVAL, () -> ctx.queryGidEntry(n + 1, 0));
    }

    @Test
    void pkeyIndexZeroIsDefaultPkey() {
        assertEquals(0xFFFF, ctx.queryPkey(1, 0) & 0xFFFF);
    }

    @Rule("S-DEV-5")
    @Test
    void queryPkeyOutOfRangeFailsEinval() {
        int len = portAttr().pkeyTblLen();
        assertErrno(Errno.EINVAL, () -> ctx.queryPkey(1, len));
        assertErrno(Errno.EINVAL, () -> ctx.queryPkey(deviceAttr().physPortCnt() + 1, 0));
    }

    @Test
    void addressHandleWithoutGrhFailsEinvalOnRoce() {
        assumeTrue(portAttr().linkLayer() == LinkLayer.ETHERNET, "only RoCE requires a GRH");
        ProtectionDomain pd = allocPd(ctx);
        assertErrno(Errno.EINVAL, () -> track(pd.createAh(new AhAttr(null, 0, 0, 0, 0, 1))));
    }

    @Test
    void addressHandleWithGrhIsCreated() {
        ProtectionDomain pd = allocPd(ctx);
        Gid dgid = peer().queryGid(1, gidIndex(peer()));
        AhAttr attr = AhAttr.roce(dgid, gidIndex(ctx));
        AddressHandle ah = track(pd.createAh(attr));
        assertSame(pd, ah.pd());
        assertTrue(ah.attr().isGlobal());
        assertEquals(dgid, ah.attr().grh().dgid());
    }

    @Test
    void addressHandleWithSgidIndexBeyondTableFailsEinval() {
        ProtectionDomain pd = allocPd(ctx);
        Gid dgid = ctx.queryGid(1, gidIndex(ctx));
        int len = portAttr().gidTblLen();
        assertErrno(Errno.EINVAL, () -> track(pd.createAh(AhAttr.roce(dgid, len))));
    }

    @Test
    void countersAreASnapshot() {
        Map<String, Long> c = ctx.counters(1);
        assertNotNull(c);
        c.values().forEach(v -> assertTrue(v >= 0, "counter values are never negative: " + c));
    }
}
