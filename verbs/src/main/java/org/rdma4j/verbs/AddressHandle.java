// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * An address handle ({@code struct ibv_ah}): the destination of UD sends
 * ({@link SendWorkRequest#ud}). {@link #close()} is {@code ibv_destroy_ah}; a UD send whose handle is
 * closed is refused at post time with IllegalStateException. Thread safe.
 */
public interface AddressHandle extends VerbsResource {
    /**
     * The protection domain the handle was created in ({@code ibv_ah.pd}); a QP of another PD cannot
     * send with it.
     *
     * @return the PD
     */
    ProtectionDomain pd();

    /**
     * The address vector the handle was created from.
     *
     * @return the address vector
     */
    AhAttr attr();
}
