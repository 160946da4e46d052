// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.GsiPort;

/** How the CM gets QP1 of a port: from the provider's context, or (in tests) from a stand-in. */
@FunctionalInterface
interface GsiOpener {
    /** The provider's QP1, through {@link GsiPort.GsiAccess}; EOPNOTSUPP for a context without one. */
    GsiOpener PROVIDER = (ctx, port, gidIndex) -> {
        if (ctx instanceof GsiPort.GsiAccess access) {
            return access.openGsi(port, gidIndex);
        }
        throw new VerbsException(Errno.EOPNOTSUPP, ctx.device().name()
                + " gives no access to QP1 (GsiPort): the IB CM cannot run on it");
    };

    GsiPort open(Context ctx, int portNum, int gidIndex);
}
