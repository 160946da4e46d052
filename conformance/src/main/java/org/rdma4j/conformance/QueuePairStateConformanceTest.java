// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.rdma4j.verbs.QpAttrMask.*;

import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.VerbsException;

/**
 * SEMANTICS.md, Control path, "QP create" and the attributes a modify takes and query reads back. A
 * QP is connected to itself (its own GID and QPN) to reach the states where they apply
 * ({@link SelfConnectedQps}); the state table itself (required, missing and extra mask bits,
 * transitions) is {@link QueuePairTransitionConformanceTest}'s.
 */
@Rule({"S-QP-1", "S-QP-2", "S-QP-5", "S-QP-8", "S-QP-9", "S-DEV-4"})
public class QueuePairStateConformanceTest extends AbstractVerbsTest {
    private static final QpState[] STEPS = SelfConnectedQps.STEPS;
    private final SelfConnectedQps qps = new SelfConnectedQps(this);

    private QueuePair newQp(QpType type) {
        return qps.newQp(type);
    }

    private Mtu mtu() {
        return qps.mtu();
    }

    private QpAttr stepAttr(QueuePair qp, QpState to) {
        return qps.stepAttr(qp, to);
    }

    private void driveTo(QueuePair qp, QpState s) {
        qps.driveTo(qp, s);
    }

    // ---------------------------------------------------------------- create

    @ParameterizedTest
    @EnumSource(QpType.class)
    void newQpIsInReset(QpType type) {
        QueuePair qp = newQp(type);
        assertEquals(QpState.RESET, qp.state());
        assertEquals(QpState.RESET, qp.query().qpState);
        assertEquals(type, qp.type());
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void qpReportsItsResources(QpType type) {
        ProtectionDomain p = allocPd(ctx);
        CompletionQueue scq = createCq(ctx, 8);
        CompletionQueue rcq = createCq(ctx, 8);
        QueuePair qp = createQp(p, new QpInitAttr(type, scq, rcq));
        assertSame(ctx, qp.context());
        assertSame(p, qp.pd());
        assertSame(scq, qp.sendCq());
        assertSame(rcq, qp.recvCq());
        assertNull(qp.srq());
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void queryReturnsTheInitAttributes(QpType type) {
        ProtectionDomain p = allocPd(ctx);
        CompletionQueue scq = createCq(ctx, 8);
        CompletionQueue rcq = createCq(ctx, 8);
        QpCap want = new QpCap(5, 7, 2, 3, 32);
        QueuePair qp = createQp(p, new QpInitAttr(type, scq, rcq).cap(want.copy()).sqSigAll(true));
        QpInitAttr init = new QpInitAttr();
        QpAttr attr = qp.query(new QpAttr(), init);
        assertEquals(QpState.RESET, attr.qpState);
        assertEquals(type, init.type, "qp_type");
        assertSame(scq, init.sendCq, "send_cq");
        assertSame(rcq, init.recvCq, "recv_cq");
        assertNull(init.srq, "srq");
        assertTrue(init.sqSigAll, "sq_sig_all");
        assertTrue(init.cap.maxSendWr >= 5 && init.cap.maxRecvWr >= 7 && init.cap.maxSendSge >= 2
                && init.cap.maxRecvSge >= 3 && init.cap.maxInlineData >= 32, () -> "cap " + init.cap);
        QpInitAttr again = qp.queryInitAttr();
        assertEquals(init.cap.toString(), again.cap.toString(), "queryInitAttr() agrees");
        assertTrue(!createQp(p, new QpInitAttr(type, scq, scq)).queryInitAttr().sqSigAll, "sq_sig_all unset");
    }

    @Test
    void queryReturnsTheSrqOfTheInitAttributes() {
        ProtectionDomain p = allocPd(ctx);
        CompletionQueue cq = createCq(ctx, 8);
        SharedReceiveQueue srq = track(p.createSrq(new SrqAttr(8, 1, 0)));
        QueuePair qp = createQp(p, new QpInitAttr(QpType.RC, cq, cq).srq(srq));
        QpInitAttr init = qp.queryInitAttr();
        assertSame(srq, init.srq, "srq");
        assertSame(cq, init.sendCq);
        assertSame(cq, init.recvCq);
    }

    @Test
    void freshQpAttrHoldsNoMadeUpValues() {
        QpAttr a = new QpAttr();
        assertNull(a.qpState, "qp_state not set");
        assertNull(a.curQpState, "cur_qp_state not set");
        assertNull(a.pathMtu, "path_mtu not set");
        assertNull(a.ahAttr, "ah_attr not set");
        assertEquals(0, a.qkey | a.rqPsn | a.sqPsn | a.destQpNum | a.qpAccessFlags | a.pkeyIndex | a.maxRdAtomic
                | a.maxDestRdAtomic | a.minRnrTimer | a.portNum | a.timeout | a.retryCnt | a.rnrRetry, "numbers are 0");
        assertTrue(!a.enSqdAsyncNotify && !a.sqDraining);
        assertEquals(new QpCap().toString(), a.cap.toString(), "cap is zero");
        assertEquals(0, a.cap.maxSendWr + a.cap.maxRecvWr + a.cap.maxSendSge + a.cap.maxRecvSge
                + a.cap.maxInlineData);
    }

    @Test
    void qpNumbersAreDistinct24BitAndNotReserved() {
        Set<Integer> qpns = new HashSet<>();
        for (QpType t : QpType.values()) {
            for (int i = 0; i < 3; i++) {
                int qpn = newQp(t).qpn();
                assertTrue(qpn > 1 && qpn <= 0xFFFFFF, "QPN 0x" + Integer.toHexString(qpn));
                assertTrue(qpns.add(qpn), "QPN 0x" + Integer.toHexString(qpn) + " given twice");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void createdCapsAreAtLeastTheRequested(QpType type) {
        int inline = Math.min(32, deviceAttr().maxInlineData());
        QpCap want = new QpCap(10, 12, 2, 3, inline);
        CompletionQueue cq = createCq(ctx, 32);
        QueuePair qp = createQp(allocPd(ctx), new QpInitAttr(type, cq, cq).cap(want.copy()));
        for (QpCap got : new QpCap[] {qp.cap(), qp.query().cap}) {
            assertTrue(got.maxSendWr >= want.maxSendWr, got.toString());
            assertTrue(got.maxRecvWr >= want.maxRecvWr, got.toString());
            assertTrue(got.maxSendSge >= want.maxSendSge, got.toString());
            assertTrue(got.maxRecvSge >= want.maxRecvSge, got.toString());
            assertTrue(got.maxInlineData >= want.maxInlineData, got.toString());
        }
    }

    static Stream<Arguments> oversizedCaps() {
        return Stream.of(
                Arguments.of("max_send_wr", 0xFFFFFFFF), Arguments.of("max_send_wr", Integer.MAX_VALUE),
                Arguments.of("max_recv_wr", 0xFFFFFFFF), Arguments.of("max_recv_wr", Integer.MAX_VALUE),
                Arguments.of("max_send_sge", 0xFFFF), Arguments.of("max_send_sge", 0xFFFFFFFF),
                Arguments.of("max_recv_sge", 0xFFFF), Arguments.of("max_recv_sge", 0xFFFFFFFF));
    }

    private static QpCap capWith(String field, int value) {
        QpCap c = new QpCap(4, 4, 1, 1, 0);
        switch (field) {
            case "max_send_wr" -> c.maxSendWr = value;
            case "max_recv_wr" -> c.maxRecvWr = value;
            case "max_send_sge" -> c.maxSendSge = value;
            case "max_recv_sge" -> c.maxRecvSge = value;
            case "max_inline_data" -> c.maxInlineData = value;
            default -> throw new IllegalArgumentException(field);
        }
        return c;
    }

    @ParameterizedTest(name = "{0} = {1}")
    @MethodSource("oversizedCaps")
    void capsAboveDeviceMaxFailEinval(String field, int value) {
        CompletionQueue cq = createCq(ctx, 8);
        ProtectionDomain p = allocPd(ctx);
        assertErrno(Errno.EINVAL, () -> track(p.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(capWith(field, value)))));
    }

    @ParameterizedTest
    @ValueSource(strings = {"max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge"})
    void capsJustAboveDeviceMaxFailEinval(String field) {
        DeviceAttr d = deviceAttr();
        int max = field.endsWith("_wr") ? d.maxQpWr() : d.maxSge();
        assumeTrue(max < Integer.MAX_VALUE);
        CompletionQueue cq = createCq(ctx, 8);
        ProtectionDomain p = allocPd(ctx);
        assertErrno(Errno.EINVAL,
                () -> track(p.createQp(new QpInitAttr(QpType.RC, cq, cq).cap(capWith(field, max + 1)))));
    }

    // ---------------------------------------------------------------- attribute values

    @ParameterizedTest
    @EnumSource(value = QpType.class, names = {"RC", "UC"})
    void queryReturnsTheConnectedAttributes(QpType type) {
        QueuePair qp = newQp(type);
        int gi = gidIndex(ctx);
        Gid gid = ctx.queryGid(1, gi);
        qp.modify(QpBringUp.initAttr(QP_ALL, DEFAULT_QKEY), STATE | QpBringUp.initRequired(type));
        qp.modify(QpBringUp.rtrAttr(mtu(), gid, gi, qp.qpn(), 0x123456, 4, 9), STATE | QpBringUp.rtrRequired(type));
        qp.modify(QpBringUp.rtsAttr(0x654321, 13, 5, 3, 2), STATE | QpBringUp.rtsRequired(type));
        QpAttr q = qp.query();
        assertEquals(QpState.RTS, q.qpState);
        assertEquals(mtu(), q.pathMtu, "path_mtu");
        assertEquals(qp.qpn(), q.destQpNum, "dest_qp_num");
        assertEquals(0x123456, q.rqPsn, "rq_psn");
        assertEquals(0x654321, q.sqPsn, "sq_psn");
        assertEquals(1, q.portNum, "port_num");
        assertEquals(0, q.pkeyIndex, "pkey_index");
        assertEquals(QP_ALL, q.qpAccessFlags, "qp_access_flags");
        assertTrue(q.ahAttr != null && q.ahAttr.isGlobal(), "ah_attr is global");
        assertEquals(gid, q.ahAttr.grh().dgid(), "dgid");
        assertEquals(gi, q.ahAttr.grh().sgidIndex(), "sgid_index");
        if (type == QpType.RC) {
            assertTrue(q.maxDestRdAtomic >= 4, "max_dest_rd_atomic " + q.maxDestRdAtomic);
            assertEquals(9, q.minRnrTimer, "min_rnr_timer");
            assertTrue(q.maxRdAtomic >= 2, "max_rd_atomic " + q.maxRdAtomic);
            assertEquals(13, q.timeout, "timeout");
            assertEquals(5, q.retryCnt, "retry_cnt");
            assertEquals(3, q.rnrRetry, "rnr_retry");
        }
    }

    @Test
    void udQkeyReadsBack() {
        QueuePair qp = newQp(QpType.UD);
        qp.modify(QpBringUp.initAttr(0, 0x12345678), STATE | QpBringUp.initRequired(QpType.UD));
        assertEquals(0x12345678, qp.query().qkey);
        qp.modify(new QpAttr().qkey(0x0BADCAFE), QKEY);
        assertEquals(0x0BADCAFE, qp.query().qkey);
    }

    @Test
    void maxDestRdAtomic12ReadsBackAtLeast12() {
        assumeTrue(deviceAttr().maxQpRdAtom() >= 12, "device allows fewer than 12 incoming reads/atomics");
        QueuePair qp = newQp(QpType.RC);
        driveTo(qp, QpState.INIT);
        qp.modify(stepAttr(qp, QpState.RTR).maxDestRdAtomic(12), STATE | QpBringUp.INIT_TO_RTR_RC);
        assertTrue(qp.query().maxDestRdAtomic >= 12, "max_dest_rd_atomic " + qp.query().maxDestRdAtomic);
    }

    @Test
    void maxDestRdAtomicAboveDeviceMaxFailsEinval() {
        int max = deviceAttr().maxQpRdAtom();
        assumeTrue(max < Integer.MAX_VALUE);
        QueuePair qp = newQp(QpType.RC);
        driveTo(qp, QpState.INIT);
        assertErrno(Errno.EINVAL,
                () -> qp.modify(stepAttr(qp, QpState.RTR).maxDestRdAtomic(max + 1), STATE | QpBringUp.INIT_TO_RTR_RC));
        assertQpState(qp, QpState.INIT);
    }

    /**
     * The 3-bit retry counts and 5-bit timers, a destination QPN above 24 bits and access bits that are
     * not QP access are EINVAL on every provider, before the device sees them (rxe would take a
     * retry_cnt of 8; hardware keeps three bits of it), and the QP stays where it was.
     */
    @Rule("S-QP-8")
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"retry_cnt 8", "rnr_retry 8", "timeout 32", "min_rnr_timer 32", "dest_qp_num 2^24",
            "access ZERO_BASED"})
    void attributesBeyondTheirFieldsFailEinvalOnEveryProvider(String which) {
        QueuePair qp = newQp(QpType.RC);
        QpAttr attr;
        int mask;
        switch (which) {
            case "dest_qp_num 2^24" -> {
                driveTo(qp, QpState.INIT);
                attr = stepAttr(qp, QpState.RTR).destQpNum(1 << 24);
                mask = STATE | QpBringUp.INIT_TO_RTR_RC;
            }
            case "access ZERO_BASED" -> {
                attr = stepAttr(qp, QpState.INIT).accessFlags(Access.REMOTE_WRITE | Access.ZERO_BASED);
                mask = STATE | QpBringUp.RESET_TO_INIT_RC_UC;
            }
            case "min_rnr_timer 32" -> {
                driveTo(qp, QpState.INIT);
                attr = stepAttr(qp, QpState.RTR).minRnrTimer(32);
                mask = STATE | QpBringUp.INIT_TO_RTR_RC;
            }
            default -> {
                driveTo(qp, QpState.RTR);
                attr = stepAttr(qp, QpState.RTS);
                switch (which) {
                    case "retry_cnt 8" -> attr.retryCnt(8);
                    case "rnr_retry 8" -> attr.rnrRetry(8);
                    default -> attr.timeout(32);
                }
                mask = STATE | QpBringUp.RTR_TO_RTS_RC;
            }
        }
        QpState before = qp.state();
        VerbsException e = assertErrno(Errno.EINVAL, () -> qp.modify(attr, mask));
        assertTrue(e.getMessage().contains(which.substring(0, which.indexOf(' ')).replace("access", "QP access")),
                e::getMessage);
        assertQpState(qp, before);
    }

    /**
     * A modify whose cur_qp_state is not the QP's state is EINVAL on every provider, and the QP stays
     * where it was (rxe alone would check the transition from the claimed state: an RTR QP claimed to
     * be in RTS would pass as RTS -> RTS and reach RTS without its send attributes); the QP's own state
     * is accepted.
     */
    @Rule("S-QP-9")
    @Test
    void curQpStateOtherThanTheQpsStateFailsEinval() {
        QueuePair qp = newQp(QpType.RC);
        driveTo(qp, QpState.RTR);
        VerbsException e = assertErrno(Errno.EINVAL,
                () -> qp.modify(new QpAttr().state(QpState.RTS).curState(QpState.RTS), STATE | CUR_STATE));
        assertTrue(e.getMessage().contains("cur_qp_state"), e::getMessage);
        assertQpState(qp, QpState.RTR);
        qp.modify(stepAttr(qp, QpState.RTS).curState(QpState.RTR), STATE | CUR_STATE | QpBringUp.RTR_TO_RTS_RC);
        assertQpState(qp, QpState.RTS);
    }

    @Test
    void maxRdAtomicAboveDeviceMaxFailsEinval() {
        int max = deviceAttr().maxQpInitRdAtom();
        assumeTrue(max < Integer.MAX_VALUE);
        QueuePair qp = newQp(QpType.RC);
        driveTo(qp, QpState.RTR);
        assertErrno(Errno.EINVAL,
                () -> qp.modify(stepAttr(qp, QpState.RTS).maxRdAtomic(max + 1), STATE | QpBringUp.RTR_TO_RTS_RC));
        assertQpState(qp, QpState.RTR);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 2})
    void portThatDoesNotExistFailsEinval(int delta) {
        int port = delta == 0 ? 0 : deviceAttr().physPortCnt() + 1;
        QueuePair qp = newQp(QpType.RC);
        assertErrno(Errno.EINVAL,
                () -> qp.modify(stepAttr(qp, QpState.INIT).portNum(port), STATE | QpBringUp.RESET_TO_INIT_RC_UC));
        assertQpState(qp, QpState.RESET);
    }

    @Test
    void pathMtuAbovePortMaxFailsEinval() {
        Mtu max = portAttr().maxMtu();
        assumeTrue(max != Mtu.MTU_4096, "port supports every MTU");
        QueuePair qp = newQp(QpType.RC);
        driveTo(qp, QpState.INIT);
        assertErrno(Errno.EINVAL,
                () -> qp.modify(stepAttr(qp, QpState.RTR).pathMtu(Mtu.MTU_4096), STATE | QpBringUp.INIT_TO_RTR_RC));
    }

    @ParameterizedTest
    @EnumSource(value = QpType.class, names = {"RC", "UC"})
    void rtrWithoutGrhFailsEinvalOnRoce(QpType type) {
        QueuePair qp = newQp(type);
        driveTo(qp, QpState.INIT);
        QpAttr attr = stepAttr(qp, QpState.RTR).ahAttr(new AhAttr(null, 0, 0, 0, 0, 1));
        assertErrno(Errno.EINVAL, () -> qp.modify(attr, STATE | QpBringUp.rtrRequired(type)));
        assertQpState(qp, QpState.INIT);
    }

    @Test
    void stateQueryAgreesWithState() {
        QueuePair qp = newQp(QpType.RC);
        for (QpState s : STEPS) {
            qp.modify(stepAttr(qp, s), STATE | QpBringUp.required(QpType.RC, s));
            assertEquals(qp.state(), qp.query().qpState);
        }
        assertNotEquals(QpState.RESET, qp.state());
    }
}
