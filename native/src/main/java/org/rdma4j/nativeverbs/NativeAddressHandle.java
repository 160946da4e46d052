// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_AH;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_AH_ATTR;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.rdma4j.nativeverbs.abi.IbvQp;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractResource;
import org.rdma4j.verbs.spi.ffm.ErrnoCapture;

/** A libibverbs address handle ({@code ibv_create_ah}) for UD sends. Thread safe (immutable after creation). */
final class NativeAddressHandle extends AbstractResource implements AddressHandle, NativeHandle {
    private final NativeProtectionDomain pd;
    private final AhAttr attr;
    private final MemorySegment ah;

    NativeAddressHandle(NativeProtectionDomain pd, AhAttr attr) {
        this.pd = pd;
        this.attr = attr;
        uses(pd);
        MemorySegment created;
        ErrnoCapture errno = ErrnoCapture.perThread();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = a.allocate(IBV_AH_ATTR);
            AhCodec.encode(m, 0, attr);
            created = (MemorySegment) IbvQp.CREATE_AH.invokeExact(errno.segment(), pd.handle(), m);
        } catch (RuntimeException e) {
            abandon();
            throw e;
        } catch (Throwable t) {
            abandon();
            throw Downcalls.rethrow(t);
        }
        if (created.address() == 0) {
            int e = errno.errno();
            abandon();
            throw new VerbsException(e, "ibv_create_ah(" + attr + ") on " + pd.context().device().name() + " failed");
        }
        this.ah = created.reinterpret(IBV_AH.byteSize());
    }

    /** The {@code struct ibv_ah *}. */
    @Override
    public MemorySegment handle() {
        return ah;
    }

    @Override
    protected String describe() {
        return attr == null ? "AH" : "AH to " + (attr.grh() != null ? attr.grh().dgid() : "LID " + attr.dlid());
    }

    @Override
    protected void destroy() {
        int ret;
        ErrnoCapture errno = ErrnoCapture.perThread();
        try {
            ret = (int) IbvQp.DESTROY_AH.invokeExact(errno.segment(), ah);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        if (ret != 0) {
            throw new VerbsException(IbvQp.errnoOf(ret, errno.errno()), "ibv_destroy_ah of " + describe() + " failed");
        }
    }

    @Override
    public ProtectionDomain pd() {
        return pd;
    }

    @Override
    public AhAttr attr() {
        return attr;
    }
}
