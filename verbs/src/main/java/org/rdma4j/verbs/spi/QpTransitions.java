// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import static org.rdma4j.verbs.QpAttrMask.*;

import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;

/**
 * The IBTA queue pair state table (IB spec 1.x, chapter 10.3 and 11.2.4.2): for each QP type and
 * (current, next) state, whether the transition exists and which attribute-mask bits it requires and
 * allows. One table, used by the soft device to validate {@code modify} and by the native provider to
 * explain an EINVAL.
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

    /** Whether {@code from -> to} exists for {@code type}. */
    public static boolean isValid(QpType type, QpState from, QpState to) {
        return VALID[index(type)][from.ordinal()][to.ordinal()];
    }

    /** Mask bits {@code from -> to} requires (besides STATE). */
    public static int required(QpType type, QpState from, QpState to) {
        return REQUIRED[index(type)][from.ordinal()][to.ordinal()];
    }

    /** Mask bits {@code from -> to} accepts besides the required ones and STATE. */
    public static int optional(QpType type, QpState from, QpState to) {
        return OPTIONAL[index(type)][from.ordinal()][to.ordinal()];
    }

    /**
     * Checks a modify request: {@code current} is the QP's state, {@code next} the requested one
     * ({@code current} when the mask has no STATE bit). Returns null when the mask is acceptable, else
     * an explanation of the EINVAL.
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
