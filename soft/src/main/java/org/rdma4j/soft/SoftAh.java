// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractPdResource;

/** A soft address handle. Thread safe (immutable). */
final class SoftAh extends AbstractPdResource<SoftPd> implements AddressHandle {
    private final AhAttr attr;

    SoftAh(SoftPd pd, AhAttr attr) {
        checkAv(pd.context(), attr);
        super(pd);
        this.attr = attr;
        pd.context().device.claim(ResourceLimits.Kind.AH, () -> uses(pd));
    }

    /** The RoCE rules for an address vector: a GRH, port 1, a populated source GID. */
    static void checkAv(SoftContext ctx, AhAttr attr) {
        if (attr == null) {
            throw new VerbsException(Errno.EINVAL, "no address vector");
        }
        if (!attr.isGlobal()) {
            throw new VerbsException(Errno.EINVAL, "RoCE needs a GRH (is_global) in the address vector");
        }
        if (attr.portNum() != 1) {
            throw new VerbsException(Errno.EINVAL, "port " + attr.portNum() + " does not exist");
        }
        int sgid = attr.grh().sgidIndex();
        if (ctx.hca.gid(sgid) == null) {
            throw new VerbsException(Errno.EINVAL, "source GID index " + sgid + " is empty");
        }
    }

    @Override
    protected String describe() {
        return "AH to " + attr.grh().dgid();
    }

    @Override
    protected void destroy() {
        pd().context().device.release(ResourceLimits.Kind.AH);
    }

    @Override
    public AhAttr attr() {
        return attr;
    }
}
