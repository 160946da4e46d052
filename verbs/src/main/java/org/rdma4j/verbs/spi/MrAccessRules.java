// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs.spi;

import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * The access-flag rules of {@code ibv_reg_mr} and {@code ibv_rereg_mr} that hold on every device (the
 * kernel's {@code ib_check_mr_access}): unknown bits are EINVAL, remote write or remote atomic without
 * local write is EINVAL, and a feature the device lacks (zero-based or on-demand regions) is EOPNOTSUPP.
 * Stateless; thread safe.
 */
public final class MrAccessRules {
    private MrAccessRules() {}

    /**
     * Checks {@code access} for a device that supports neither zero-based nor on-demand regions.
     *
     * @param access the {@link Access} bits asked for
     *
     * @throws VerbsException EINVAL or EOPNOTSUPP as described above
     */
    public static void check(int access) {
        check(access, false, false);
    }

    /**
     * Checks {@code access} for a device that supports zero-based regions if {@code zeroBased} and
     * on-demand paging if {@code onDemand}.
     *
     * @param access    the {@link Access} bits asked for
     * @param zeroBased whether the device supports ZERO_BASED
     * @param onDemand  whether the device supports ON_DEMAND
     *
     * @throws VerbsException EINVAL for unknown bits or remote write/atomic without local write,
     *     EOPNOTSUPP for a feature the device does not have
     */
    public static void check(int access, boolean zeroBased, boolean onDemand) {
        if ((access & ~Access.ALL) != 0) {
            throw new VerbsException(Errno.EINVAL, "unknown access bits 0x" + Integer.toHexString(access));
        }
        if ((access & (Access.REMOTE_WRITE | Access.REMOTE_ATOMIC)) != 0
                && (access & Access.LOCAL_WRITE) == 0) {
            // the responder writes the region on the peer's behalf: the owner must allow writing at all
            throw new VerbsException(Errno.EINVAL, "REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE");
        }
        int unsupported = (zeroBased ? 0 : Access.ZERO_BASED) | (onDemand ? 0 : Access.ON_DEMAND);
        if ((access & unsupported) != 0) {
            throw new VerbsException(Errno.EOPNOTSUPP, "zero-based and on-demand regions are not supported");
        }
    }
}
