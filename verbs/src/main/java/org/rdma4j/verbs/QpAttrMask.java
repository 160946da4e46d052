// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Bits of the attribute mask passed to {@link QueuePair#modify}, mirroring {@code enum ibv_qp_attr_mask}:
 * each names the {@link QpAttr} field {@code modify} reads. Which bits a transition requires and
 * allows is the IBTA state table ({@link org.rdma4j.verbs.spi.QpTransitions}, S-QP-2); the fluent
 * setters of {@link QpAttr} record them for you.
 */
public final class QpAttrMask {
    /** {@code IBV_QP_STATE}: {@link QpAttr#qpState}, the state to move to. */
    public static final int STATE = 1;
    /** {@code IBV_QP_CUR_STATE}: {@link QpAttr#curQpState}. */
    public static final int CUR_STATE = 1 << 1;
    /** {@code IBV_QP_EN_SQD_ASYNC_NOTIFY}: {@link QpAttr#enSqdAsyncNotify}. */
    public static final int EN_SQD_ASYNC_NOTIFY = 1 << 2;
    /** {@code IBV_QP_ACCESS_FLAGS}: {@link QpAttr#qpAccessFlags}. */
    public static final int ACCESS_FLAGS = 1 << 3;
    /** {@code IBV_QP_PKEY_INDEX}: {@link QpAttr#pkeyIndex}. */
    public static final int PKEY_INDEX = 1 << 4;
    /** {@code IBV_QP_PORT}: {@link QpAttr#portNum}. */
    public static final int PORT = 1 << 5;
    /** {@code IBV_QP_QKEY}: {@link QpAttr#qkey}. */
    public static final int QKEY = 1 << 6;
    /** {@code IBV_QP_AV}: {@link QpAttr#ahAttr}, the primary path. */
    public static final int AV = 1 << 7;
    /** {@code IBV_QP_PATH_MTU}: {@link QpAttr#pathMtu}. */
    public static final int PATH_MTU = 1 << 8;
    /** {@code IBV_QP_TIMEOUT}: {@link QpAttr#timeout}. */
    public static final int TIMEOUT = 1 << 9;
    /** {@code IBV_QP_RETRY_CNT}: {@link QpAttr#retryCnt}. */
    public static final int RETRY_CNT = 1 << 10;
    /** {@code IBV_QP_RNR_RETRY}: {@link QpAttr#rnrRetry}. */
    public static final int RNR_RETRY = 1 << 11;
    /** {@code IBV_QP_RQ_PSN}: {@link QpAttr#rqPsn}. */
    public static final int RQ_PSN = 1 << 12;
    /** {@code IBV_QP_MAX_QP_RD_ATOMIC}: {@link QpAttr#maxRdAtomic}. */
    public static final int MAX_QP_RD_ATOMIC = 1 << 13;
    /** {@code IBV_QP_ALT_PATH}: the alternate path; {@link QpAttr} has no fields for it (no path migration). */
    public static final int ALT_PATH = 1 << 14;
    /** {@code IBV_QP_MIN_RNR_TIMER}: {@link QpAttr#minRnrTimer}. */
    public static final int MIN_RNR_TIMER = 1 << 15;
    /** {@code IBV_QP_SQ_PSN}: {@link QpAttr#sqPsn}. */
    public static final int SQ_PSN = 1 << 16;
    /** {@code IBV_QP_MAX_DEST_RD_ATOMIC}: {@link QpAttr#maxDestRdAtomic}. */
    public static final int MAX_DEST_RD_ATOMIC = 1 << 17;
    /** {@code IBV_QP_PATH_MIG_STATE}: the path migration state; {@link QpAttr} has no field for it. */
    public static final int PATH_MIG_STATE = 1 << 18;
    /** {@code IBV_QP_CAP}: {@link QpAttr#cap} (resizing a QP; not accepted by any transition of the table). */
    public static final int CAP = 1 << 19;
    /** {@code IBV_QP_DEST_QPN}: {@link QpAttr#destQpNum}. */
    public static final int DEST_QPN = 1 << 20;

    private static final String[] NAMES = {
        "STATE", "CUR_STATE", "EN_SQD_ASYNC_NOTIFY", "ACCESS_FLAGS", "PKEY_INDEX", "PORT", "QKEY", "AV",
        "PATH_MTU", "TIMEOUT", "RETRY_CNT", "RNR_RETRY", "RQ_PSN", "MAX_QP_RD_ATOMIC", "ALT_PATH",
        "MIN_RNR_TIMER", "SQ_PSN", "MAX_DEST_RD_ATOMIC", "PATH_MIG_STATE", "CAP", "DEST_QPN"};

    private QpAttrMask() {}

    /**
     * The text of a mask for messages.
     *
     * @param mask the bits
     * @return e.g. {@code "STATE|PKEY_INDEX|PORT"}; {@code "0"} for none; an unknown bit {@code n} as
     *     {@code BITn}
     */
    public static String toString(int mask) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 32; i++) {
            if ((mask & (1 << i)) != 0) {
                if (!sb.isEmpty()) {
                    sb.append('|');
                }
                sb.append(i < NAMES.length ? NAMES[i] : "BIT" + i);
            }
        }
        return sb.isEmpty() ? "0" : sb.toString();
    }
}
