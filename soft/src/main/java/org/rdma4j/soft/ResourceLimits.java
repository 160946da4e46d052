// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

/**
 * How many objects of each kind one soft device holds at once ({@code max_qp}, {@code max_cq}, ...
 * of {@code ibv_query_device}); one past a limit fails with EINVAL, as in Linux rxe's object pools.
 * {@link #RXE} (the default) are rxe's values, except max_qp: 256 Ki where rxe stops at 64 Ki (the
 * soft engine holds that many idle QPs); a device for a test can be given small ones, so that
 * "one past the limit" is reachable. Immutable.
 * {@snippet :
 * Device tiny = SoftDevices.createLoopback("tiny", ResourceLimits.uniform(16));
 * }
 */
public record ResourceLimits(int maxQp, int maxCq, int maxMr, int maxPd, int maxMw, int maxAh, int maxSrq) {
    /** Linux rxe's limits (rxe_param.h), with max_qp raised to {@code Hca.MAX_QP}. */
    public static final ResourceLimits RXE = new ResourceLimits(SoftLimits.MAX_QP, SoftLimits.MAX_CQ,
            SoftLimits.MAX_MR, SoftLimits.MAX_PD, SoftLimits.MAX_MW, SoftLimits.MAX_AH, SoftLimits.MAX_SRQ);

    /** The kinds of object that are counted. */
    public enum Kind { QP, CQ, MR, PD, MW, AH, SRQ }

    public ResourceLimits {
        if (maxQp < 1 || maxQp > SoftLimits.MAX_QP || maxCq < 1 || maxMr < 1 || maxPd < 1 || maxMw < 1 || maxAh < 1
                || maxSrq < 1) {
            throw new IllegalArgumentException("every limit must be at least 1 (max_qp at most "
                    + SoftLimits.MAX_QP + ")");
        }
    }

    /** The same limit {@code n} for every kind. */
    public static ResourceLimits uniform(int n) {
        return new ResourceLimits(n, n, n, n, n, n, n);
    }

    /** The limit for {@code kind}. */
    public int max(Kind kind) {
        return switch (kind) {
            case QP -> maxQp;
            case CQ -> maxCq;
            case MR -> maxMr;
            case PD -> maxPd;
            case MW -> maxMw;
            case AH -> maxAh;
            case SRQ -> maxSrq;
        };
    }
}
