// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import static org.rdma4j.verbs.QpAttrMask.*;

import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;

/**
 * The IBTA queue pair state table (IB spec 1.x, chapter 10.3 and 11.2.4.2): for each QP type and
 * (current, next) state, whether the transition exists and which attribute-mask bits it requires and
 * allows. One table, used by the soft device to validate {@code modify} and by
 * {@link org.rdma4j.verbs.QueuePairBuilder} to build each step's mask (SEMANTICS S-QP-2, S-QP-3, S-QP-4).
 * Immutable; thread safe.
 */
public final class QpTransitions {
    private static final int N = QpState.values().length;
    private static final int T = 3; // RC, UC, UD
    private static final boolean[][][] VALID = new boolean[T][N][N];
    private static final int[][][] REQUIRED = new int[T][N][N];
    private static final int[][][] OPTIONAL = new int[T][N][N];

    private static final int RC = 0;
    private static final int UC = 1;
    private static final int UD = 2;

    static {
        int reset = QpState.RESET.ordinal(), init = QpState.INIT.ordinal(), rtr = QpState.RTR.ordinal();
        int rts = QpState.RTS.ordinal(), sqd = QpState.SQD.ordinal(), sqe = QpState.SQE.ordinal();
        int err = QpState.ERR.ordinal();
        for (int t = 0; t < T; t++) {
            for (int s = 0; s < N; s++) {
                VALID[t][s][reset] = true;
                VALID[t][s][err] = true;
            }
        }
        // RESET -> INIT
        rule(RC, reset, init, PKEY_INDEX | PORT | ACCESS_FLAGS, 0);
        rule(UC, reset, init, PKEY_INDEX | PORT | ACCESS_FLAGS, 0);
        rule(UD, reset, init, PKEY_INDEX | PORT | QKEY, 0);
        // INIT -> INIT
        rule(RC, init, init, 0, PKEY_INDEX | PORT | ACCESS_FLAGS);
        rule(UC, init, init, 0, PKEY_INDEX | PORT | ACCESS_FLAGS);
        rule(UD, init, init, 0, PKEY_INDEX | PORT | QKEY);
        // INIT -> RTR
        rule(RC, init, rtr, AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER,
                ALT_PATH | ACCESS_FLAGS | PKEY_INDEX);
        rule(UC, init, rtr, AV | PATH_MTU | DEST_QPN | RQ_PSN, ALT_PATH | ACCESS_FLAGS | PKEY_INDEX);
        rule(UD, init, rtr, 0, PKEY_INDEX | QKEY);
        // RTR -> RTS
        rule(RC, rtr, rts, SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC,
                CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE);
        rule(UC, rtr, rts, SQ_PSN, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE);
        rule(UD, rtr, rts, SQ_PSN, CUR_STATE | QKEY);
        // RTS -> RTS
        rule(RC, rts, rts, 0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER);
        rule(UC, rts, rts, 0, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE);
        rule(UD, rts, rts, 0, CUR_STATE | QKEY);
        // RTS -> SQD
        for (int t = 0; t < T; t++) {
            rule(t, rts, sqd, 0, EN_SQD_ASYNC_NOTIFY);
        }
        // SQD -> RTS
        rule(RC, sqd, rts, 0, CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE);
        rule(UC, sqd, rts, 0, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE);
        rule(UD, sqd, rts, 0, CUR_STATE | QKEY);
        // SQD -> SQD
        rule(RC, sqd, sqd, 0, PORT | AV | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC
                | MAX_DEST_RD_ATOMIC | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | MIN_RNR_TIMER | PATH_MIG_STATE);
        rule(UC, sqd, sqd, 0, AV | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE);
        rule(UD, sqd, sqd, 0, PKEY_INDEX | QKEY);
        // SQE -> RTS (not for RC: an RC send queue error goes straight to ERR)
        rule(UC, sqe, rts, 0, CUR_STATE | ACCESS_FLAGS);
        rule(UD, sqe, rts, 0, CUR_STATE | QKEY);
    }

    private QpTransitions() {}

    private static void rule(int t, int from, int to, int required, int optional) {
        VALID[t][from][to] = true;
        REQUIRED[t][from][to] = required;
        OPTIONAL[t][from][to] = optional;
    }

    private static int index(QpType type) {
        return switch (type) {
            case RC -> RC;
            case UC -> UC;
            case UD -> UD;
        };
    }

    /**
     * Whether {@code from -> to} exists for {@code type}.
     *
     * @param type the QP type
     * @param from the current state
     * @param to   the requested state
     * @return true for a transition of the table (any state to RESET or ERR included)
     */
    public static boolean isValid(QpType type, QpState from, QpState to) {
        return VALID[index(type)][from.ordinal()][to.ordinal()];
    }

    /**
     * The mask bits {@code from -> to} requires (besides STATE).
     *
     * @param type the QP type
     * @param from the current state
     * @param to   the requested state
     * @return {@link QpAttrMask} bits; 0 for a transition without requirements or not in the table
     */
    public static int required(QpType type, QpState from, QpState to) {
        return REQUIRED[index(type)][from.ordinal()][to.ordinal()];
    }

    /**
     * The mask bits {@code from -> to} accepts besides the required ones and STATE.
     *
     * @param type the QP type
     * @param from the current state
     * @param to   the requested state
     * @return {@link QpAttrMask} bits
     */
    public static int optional(QpType type, QpState from, QpState to) {
        return OPTIONAL[index(type)][from.ordinal()][to.ordinal()];
    }

    /**
     * Checks a modify request's {@code cur_qp_state} ({@code claimed}) against the state the QP is in
     * ({@code actual}): every provider refuses a request made for another state than the QP's (rxe
     * would otherwise check the transition from the claimed state).
     *
     * @param claimed the request's {@code cur_qp_state}
     * @param actual  the QP's state
     * @return null when they agree, else the explanation of the EINVAL
     */
    public static String checkCurrentState(QpState claimed, QpState actual) {
        return claimed == actual ? null : "cur_qp_state " + claimed + " but the QP is in " + actual;
    }

    /**
     * Checks a modify request: {@code current} is the QP's state, {@code next} the requested one
     * ({@code current} when the mask has no STATE bit). Returns null when the mask is acceptable, else
     * an explanation of the EINVAL.
     *
     * @param type    the QP type
     * @param current the QP's state
     * @param next    the requested state
     * @param mask    the {@link QpAttrMask} bits given
     * @return null when acceptable, else the message for the EINVAL (naming the missing or extra bits)
     */
    public static String check(QpType type, QpState current, QpState next, int mask) {
        if (!isValid(type, current, next)) {
            return "no transition " + current + " -> " + next + " for a " + type + " QP";
        }
        int req = required(type, current, next);
        int opt = optional(type, current, next);
        if ((mask & req) != req) {
            return current + " -> " + next + " for " + type + " requires " + QpAttrMask.toString(req)
                    + "; missing " + QpAttrMask.toString(req & ~mask);
        }
        int extra = mask & ~(req | opt | STATE);
        if (extra != 0) {
            return current + " -> " + next + " for " + type + " does not accept "
                    + QpAttrMask.toString(extra);
        }
        return null;
    }
}
