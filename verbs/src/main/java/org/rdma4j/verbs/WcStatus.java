// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * Work completion status, mirroring {@code enum ibv_wc_status} (same order and values). The
 * SEMANTICS rules S-ERR-1..9 say which cause gives which status on each side. The soft device reports
 * SUCCESS, the local and remote errors of those rules, WR_FLUSH_ERR, MW_BIND_ERR and the two retry
 * errors; the native provider reports whatever the device reports. The reliable-datagram (EEC, RDD)
 * and tag-matching statuses exist for the numbering only.
 */
public enum WcStatus {
    /** {@code IBV_WC_SUCCESS}: the request completed. */
    SUCCESS,
    /**
     * {@code IBV_WC_LOC_LEN_ERR}: a receive too short for the message (S-ERR-4), or a message too
     * long for the path.
     */
    LOC_LEN_ERR,
    /**
     * {@code IBV_WC_LOC_QP_OP_ERR}: a receive the QP cannot execute, e.g. with a bad lkey or into a
     * deregistered region (S-ERR-3, S-MR-4).
     */
    LOC_QP_OP_ERR,
    /** {@code IBV_WC_LOC_EEC_OP_ERR}: reliable datagram only; not reported. */
    LOC_EEC_OP_ERR,
    /**
     * {@code IBV_WC_LOC_PROT_ERR}: a local buffer the request may not use: an invalid lkey, a range
     * outside the region, missing LOCAL_WRITE, freed memory (S-ERR-7, S-ERR-8, S-LIFE-1).
     */
    LOC_PROT_ERR,
    /**
     * {@code IBV_WC_WR_FLUSH_ERR}: the QP was in ERR, so the request was flushed without executing
     * (S-ERR-9); only {@code wr_id} and {@code qp_num} are meaningful.
     */
    WR_FLUSH_ERR,
    /** {@code IBV_WC_MW_BIND_ERR}: a memory window bind failed (S-MR-4, S-MW-1). */
    MW_BIND_ERR,
    /** {@code IBV_WC_BAD_RESP_ERR}: the responder answered with something unexpected. */
    BAD_RESP_ERR,
    /** {@code IBV_WC_LOC_ACCESS_ERR}: a protection error on a local buffer, reported by the responder. */
    LOC_ACCESS_ERR,
    /**
     * {@code IBV_WC_REM_INV_REQ_ERR}: the responder refused the request as invalid: an operation its QP
     * does not allow, a misaligned atomic, a too short receive (S-ERR-2, S-ERR-4).
     */
    REM_INV_REQ_ERR,
    /**
     * {@code IBV_WC_REM_ACCESS_ERR}: the responder refused the remote memory access: bad rkey, missing
     * right, range outside the region, another PD (S-ERR-1).
     */
    REM_ACCESS_ERR,
    /**
     * {@code IBV_WC_REM_OP_ERR}: the responder could not complete the operation, e.g. its receive was
     * bad (S-ERR-3).
     */
    REM_OP_ERR,
    /** {@code IBV_WC_RETRY_EXC_ERR}: no answer after {@code retry_cnt} retransmissions (S-ERR-6, S-PORT-2). */
    RETRY_EXC_ERR,
    /**
     * {@code IBV_WC_RNR_RETRY_EXC_ERR}: the peer still had no receive posted after {@code rnr_retry}
     * retries (S-ERR-5).
     */
    RNR_RETRY_EXC_ERR,
    /** {@code IBV_WC_LOC_RDD_VIOL_ERR}: reliable datagram only; not reported. */
    LOC_RDD_VIOL_ERR,
    /** {@code IBV_WC_REM_INV_RD_REQ_ERR}: reliable datagram only; not reported. */
    REM_INV_RD_REQ_ERR,
    /** {@code IBV_WC_REM_ABORT_ERR}: the responder aborted the operation. */
    REM_ABORT_ERR,
    /** {@code IBV_WC_INV_EECN_ERR}: reliable datagram only; not reported. */
    INV_EECN_ERR,
    /** {@code IBV_WC_INV_EEC_STATE_ERR}: reliable datagram only; not reported. */
    INV_EEC_STATE_ERR,
    /** {@code IBV_WC_FATAL_ERR}: the device failed. */
    FATAL_ERR,
    /** {@code IBV_WC_RESP_TIMEOUT_ERR}: the responder did not answer in time. */
    RESP_TIMEOUT_ERR,
    /** {@code IBV_WC_GENERAL_ERR}: an error with no status of its own (see {@code vendor_err}). */
    GENERAL_ERR,
    /** {@code IBV_WC_TM_ERR}: tag matching only; not reported. */
    TM_ERR,
    /** {@code IBV_WC_TM_RNDV_INCOMPLETE}: tag matching only; not reported. */
    TM_RNDV_INCOMPLETE;

    private static final WcStatus[] VALUES = values();

    /** {@return the numeric value of {@code IBV_WC_*}} */
    public int value() {
        return ordinal();
    }

    /**
     * The status of a numeric {@code IBV_WC_*} value.
     *
     * @param value 0 to 23
     * @return the status
     * @throws ArrayIndexOutOfBoundsException for any other value
     */
    public static WcStatus of(int value) {
        return VALUES[value];
    }

    /** {@return the text {@code ibv_wc_status_str} gives, e.g. "remote access error"} */
    public String description() {
        return switch (this) {
            case SUCCESS -> "success";
            case LOC_LEN_ERR -> "local length error";
            case LOC_QP_OP_ERR -> "local QP operation error";
            case LOC_EEC_OP_ERR -> "local EE context operation error";
            case LOC_PROT_ERR -> "local protection error";
            case WR_FLUSH_ERR -> "Work Request Flushed Error";
            case MW_BIND_ERR -> "memory management operation error";
            case BAD_RESP_ERR -> "bad response error";
            case LOC_ACCESS_ERR -> "local access error";
            case REM_INV_REQ_ERR -> "remote invalid request error";
            case REM_ACCESS_ERR -> "remote access error";
            case REM_OP_ERR -> "remote operation error";
            case RETRY_EXC_ERR -> "transport retry counter exceeded";
            case RNR_RETRY_EXC_ERR -> "RNR retry counter exceeded";
            case LOC_RDD_VIOL_ERR -> "local RDD violation error";
            case REM_INV_RD_REQ_ERR -> "remote invalid RD request";
            case REM_ABORT_ERR -> "aborted error";
            case INV_EECN_ERR -> "invalid EE context number";
            case INV_EEC_STATE_ERR -> "invalid EE context state";
            case FATAL_ERR -> "fatal error";
            case RESP_TIMEOUT_ERR -> "response timeout error";
            case GENERAL_ERR -> "general error";
            case TM_ERR -> "TM error";
            case TM_RNDV_INCOMPLETE -> "TM software rendezvous";
        };
    }
}
