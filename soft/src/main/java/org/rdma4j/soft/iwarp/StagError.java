// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

/**
 * Why an STag was refused for a placement or a read, in the four kinds siw's memory check tells apart
 * ({@code siw_check_mem}: not valid, other PD, missing permission, outside the range), with the
 * Terminate codes siw sends for each: {@link #ddpTaggedCode()} for an inbound tagged segment
 * ({@code siw_tagged_error}), {@link #rdmapCode()} for a Read Request whose source fails
 * ({@code siw_rdmap_error}).
 */
public enum StagError {
    /** Unknown, deregistered or invalidated STag, or its key part does not match. */
    INVALID_STAG(Terminate.DDP_T_INVALID_STAG, Terminate.RDMAP_INVALID_STAG),
    /** The range lies (partly) outside the STag's window, or the tagged offset wraps. */
    BASE_BOUNDS(Terminate.DDP_T_BASE_BOUNDS, Terminate.RDMAP_BASE_BOUNDS),
    /**
     * The STag does not grant the access. RFC 5041 has no tagged code for this; siw sends "invalid
     * STag" at the DDP layer and "access rights violation" at the RDMAP layer.
     */
    ACCESS(Terminate.DDP_T_INVALID_STAG, Terminate.RDMAP_ACCESS_RIGHTS),
    /** The STag belongs to another protection domain, or a window bound through another QP. */
    NOT_ASSOCIATED(Terminate.DDP_T_STAG_NOT_ASSOCIATED, Terminate.RDMAP_STAG_NOT_ASSOCIATED);

    private final int ddpTaggedCode;
    private final int rdmapCode;

    StagError(int ddpTaggedCode, int rdmapCode) {
        this.ddpTaggedCode = ddpTaggedCode;
        this.rdmapCode = rdmapCode;
    }

    /** {@return the DDP tagged buffer error code for this refusal} */
    public int ddpTaggedCode() {
        return ddpTaggedCode;
    }

    /** {@return the RDMAP remote protection error code for this refusal} */
    public int rdmapCode() {
        return rdmapCode;
    }
}
