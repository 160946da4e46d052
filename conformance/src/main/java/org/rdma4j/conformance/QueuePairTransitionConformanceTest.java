// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.rdma4j.verbs.QpAttrMask.*;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;

/**
 * SEMANTICS.md, Control path, "Modify follows the IBTA state table": per QP type and transition, the
 * required attribute masks, a missing or extra bit, the optional bits, transitions outside the table,
 * and any state to RESET or ERR. A QP is connected to itself (its own GID and QPN), which is enough to
 * walk the state table ({@link SelfConnectedQps}); what a QP is created with and the attribute values
 * it takes are {@link QueuePairStateConformanceTest}'s.
 */
@Rule({"S-QP-2", "S-QP-3", "S-QP-4", "S-QP-7"})
public class QueuePairTransitionConformanceTest extends AbstractVerbsTest {
    private static final QpState[] STEPS = SelfConnectedQps.STEPS;
    private final SelfConnectedQps qps = new SelfConnectedQps(this);

    private QueuePair newQp(QpType type) {
        return qps.newQp(type);
    }

    private QpAttr stepAttr(QueuePair qp, QpState to) {
        return qps.stepAttr(qp, to);
    }

    private void driveTo(QueuePair qp, QpState s) {
        qps.driveTo(qp, s);
    }

    private static QpState before(QpState step) {
        return switch (step) {
            case INIT -> QpState.RESET;
            case RTR -> QpState.INIT;
            case RTS -> QpState.RTR;
            default -> throw new IllegalArgumentException(step.toString());
        };
    }

    /** Optional bits per the IBTA table (kernel ib_modify_qp_is_ok) for RESET->INIT, INIT->RTR, RTR->RTS. */
    private static int optional(QpType t, QpState step) {
        return switch (step) {
            case INIT -> 0;
            case RTR -> t == QpType.UD ? PKEY_INDEX | QKEY : ALT_PATH | ACCESS_FLAGS | PKEY_INDEX;
            case RTS -> switch (t) {
                case RC -> CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE;
                case UC -> CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE;
                case UD -> CUR_STATE | QKEY;
            };
            default -> throw new IllegalArgumentException(step.toString());
        };
    }

    @ParameterizedTest
    @EnumSource(QpType.class)
    void requiredMasksBringQpToRts(QpType type) {
        QueuePair qp = newQp(type);
        for (QpState step : STEPS) {
            qp.modify(stepAttr(qp, step), STATE | QpBringUp.required(type, step));
            assertEquals(step, qp.state(), "state()");
            assertEquals(step, qp.query().qpState, "query");
        }
    }

    static Stream<Arguments> missingBits() {
        List<Arguments> l = new ArrayList<>();
        for (QpType t : QpType.values()) {
            for (QpState step : STEPS) {
                int req = QpBringUp.required(t, step) | STATE;
                if (req == STATE) {
                    continue; // UD INIT -> RTR: without STATE the mask is empty, a legal no-op INIT -> INIT
                }
                for (int bit = 1; bit != 0 && bit <= req; bit <<= 1) {
                    if ((req & bit) != 0) {
                        l.add(Arguments.of(t, step, QpAttrMask.toString(bit), bit));
                    }
                }
            }
        }
        return l.stream();
    }

    @ParameterizedTest(name = "{0} -> {1} without {2}")
    @MethodSource("missingBits")
    void missingRequiredBitFailsEinval(QpType type, QpState step, String name, int bit) {
        QueuePair qp = newQp(type);
        QpState from = before(step);
        driveTo(qp, from);
        int mask = (STATE | QpBringUp.required(type, step)) & ~bit;
        assertErrno(Errno.EINVAL, () -> qp.modify(stepAttr(qp, step), mask));
        assertQpState(qp, from);
    }

    static Stream<Arguments> extraBits() {
        List<Arguments> l = new ArrayList<>();
        for (QpType t : QpType.values()) {
            for (QpState step : STEPS) {
                int allowed = STATE | QpBringUp.required(t, step) | optional(t, step);
                for (int bit = 1; bit <= QpBringUp.ALL_MASK_BITS; bit <<= 1) {
                    if ((allowed & bit) == 0) {
                        l.add(Arguments.of(t, step, QpAttrMask.toString(bit), bit));
                    }
                }
            }
        }
        return l.stream();
    }

    @ParameterizedTest(name = "{0} -> {1} with {2}")
    @MethodSource("extraBits")
    void extraBitFailsEinval(QpType type, QpState step, String name, int bit) {
        QueuePair qp = newQp(type);
        QpState from = before(step);
        driveTo(qp, from);
        QpAttr attr = stepAttr(qp, step);
        attr.curQpState = from;
        int mask = STATE | QpBringUp.required(type, step) | bit;
        assertErrno(Errno.EINVAL, () -> qp.modify(attr, mask));
        assertQpState(qp, from);
    }

    static Stream<Arguments> optionalMasks() {
        List<Arguments> l = new ArrayList<>();
        for (QpType t : QpType.values()) {
            boolean ud = t == QpType.UD;
            int initOpt = ud ? PKEY_INDEX | PORT | QKEY : PKEY_INDEX | PORT | ACCESS_FLAGS;
            l.add(Arguments.of(t, QpState.INIT, QpState.INIT, STATE | initOpt));
            l.add(Arguments.of(t, QpState.INIT, QpState.INIT, ud ? QKEY : ACCESS_FLAGS));
            l.add(Arguments.of(t, QpState.INIT, QpState.RTR,
                    STATE | QpBringUp.rtrRequired(t) | (ud ? PKEY_INDEX | QKEY : ACCESS_FLAGS | PKEY_INDEX)));
            int rtsOpt = switch (t) {
                case RC -> CUR_STATE | ACCESS_FLAGS | MIN_RNR_TIMER;
                case UC -> CUR_STATE | ACCESS_FLAGS;
                case UD -> CUR_STATE | QKEY;
            };
            l.add(Arguments.of(t, QpState.RTR, QpState.RTS, STATE | QpBringUp.rtsRequired(t) | rtsOpt));
            int rtsRts = switch (t) {
                case RC -> ACCESS_FLAGS | MIN_RNR_TIMER;
                case UC -> ACCESS_FLAGS;
                case UD -> QKEY;
            };
            l.add(Arguments.of(t, QpState.RTS, QpState.RTS, STATE | CUR_STATE | rtsRts));
            l.add(Arguments.of(t, QpState.RTS, QpState.RTS, rtsRts));
            l.add(Arguments.of(t, QpState.RTS, QpState.SQD, STATE));
            l.add(Arguments.of(t, QpState.SQD, QpState.RTS, STATE));
        }
        return l.stream();
    }

    @ParameterizedTest(name = "{0} {1} -> {2} with {3}")
    @MethodSource("optionalMasks")
    void optionalBitsAreAccepted(QpType type, QpState from, QpState to, int mask) {
        QueuePair qp = newQp(type);
        driveTo(qp, from);
        QpAttr attr = to == QpState.SQD || from == QpState.SQD ? new QpAttr().state(to) : stepAttr(qp, to);
        attr.curQpState = from;
        attr.state(to);
        qp.modify(attr, mask);
        awaitQpState(qp, to);
    }

    static Stream<Arguments> resetOrErr() {
        List<Arguments> l = new ArrayList<>();
        for (QpType t : QpType.values()) {
            for (QpState from : new QpState[] {QpState.RESET, QpState.INIT, QpState.RTR, QpState.RTS, QpState.SQD,
                    QpState.ERR}) {
                l.add(Arguments.of(t, from, QpState.RESET));
                l.add(Arguments.of(t, from, QpState.ERR));
            }
        }
        return l.stream();
    }

    @Rule("S-QP-7")
    @ParameterizedTest(name = "{0} {1} -> {2}")
    @MethodSource("resetOrErr")
    void anyStateMayMoveToResetOrErr(QpType type, QpState from, QpState to) {
        QueuePair qp = newQp(type);
        driveTo(qp, from);
        QpBringUp.to(qp, to);
        assertQpState(qp, to);
        assertEquals(to, qp.state());
    }

    @ParameterizedTest(name = "{0} {1} -> {2} with {3}")
    @MethodSource("resetOrErrWithExtraBits")
    void moveToResetOrErrWithAnyOtherBitFailsEinval(QpType type, QpState from, QpState to, String name, int bit) {
        QueuePair qp = newQp(type);
        driveTo(qp, from);
        assertErrno(Errno.EINVAL, () -> qp.modify(stepAttr(qp, QpState.RTS).portNum(1).state(to), STATE | bit));
        assertQpState(qp, from);
    }

    static Stream<Arguments> resetOrErrWithExtraBits() {
        List<Arguments> l = new ArrayList<>();
        for (QpType t : QpType.values()) {
            for (QpState to : new QpState[] {QpState.RESET, QpState.ERR}) {
                l.add(Arguments.of(t, QpState.RTS, to, "PORT", PORT));
                l.add(Arguments.of(t, QpState.INIT, to, "SQ_PSN", SQ_PSN));
            }
        }
        return l.stream();
    }

    static Stream<Arguments> invalidTransitions() {
        QpState[][] pairs = {
            {QpState.RESET, QpState.RTR}, {QpState.RESET, QpState.RTS}, {QpState.RESET, QpState.SQD},
            {QpState.INIT, QpState.RTS}, {QpState.INIT, QpState.SQD},
            {QpState.RTR, QpState.INIT}, {QpState.RTR, QpState.SQD},
            {QpState.RTS, QpState.INIT}, {QpState.RTS, QpState.RTR},
            {QpState.SQD, QpState.INIT}, {QpState.SQD, QpState.RTR},
            {QpState.ERR, QpState.INIT}, {QpState.ERR, QpState.RTR}, {QpState.ERR, QpState.RTS},
        };
        List<Arguments> l = new ArrayList<>();
        for (QpType t : QpType.values()) {
            for (QpState[] p : pairs) {
                l.add(Arguments.of(t, p[0], p[1]));
            }
        }
        return l.stream();
    }

    @ParameterizedTest(name = "{0} {1} -> {2}")
    @MethodSource("invalidTransitions")
    void transitionOutsideTheTableFailsEinval(QpType type, QpState from, QpState to) {
        QueuePair qp = newQp(type);
        driveTo(qp, from);
        int mask = STATE;
        QpAttr attr = new QpAttr().state(to);
        if (to == QpState.INIT || to == QpState.RTR || to == QpState.RTS) {
            mask |= QpBringUp.required(type, to);
            attr = stepAttr(qp, to);
        }
        QpAttr a = attr;
        int m = mask;
        assertErrno(Errno.EINVAL, () -> qp.modify(a, m));
        assertQpState(qp, from);
    }
}
