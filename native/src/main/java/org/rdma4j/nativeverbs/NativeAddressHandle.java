// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_AH;
import static org.rdma4j.nativeverbs.abi.QpLayouts.IBV_AH_ATTR;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.rdma4j.nativeverbs.abi.IbvQp;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.spi.AbstractPdResource;

/** A libibverbs address handle ({@code ibv_create_ah}) for UD sends. Thread safe (immutable after creation). */
final class NativeAddressHandle extends AbstractPdResource<NativeProtectionDomain>
        implements AddressHandle, NativeHandle {
    private final AhAttr attr;
    private final MemorySegment ah;

    NativeAddressHandle(NativeProtectionDomain pd, AhAttr attr) {
        super(pd);
        this.attr = attr;
        uses(pd);
        MemorySegment created;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = a.allocate(IBV_AH_ATTR);
            AhCodec.encode(m, 0, attr);
            created = Downcalls.createAs(() -> "ibv_create_ah(" + attr + ") on " + pd.context().device().name() + " failed",
                    this::abandon, e -> (MemorySegment) IbvQp.CREATE_AH.invokeExact(e, pd.handle(), m));
        } catch (RuntimeException | Error e) {
            abandon(); // the encoding failed (releasing twice, after createAs, does nothing)
            throw e;
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
        Downcalls.checkAs(() -> "ibv_destroy_ah of " + describe() + " failed",
                e -> (int) IbvQp.DESTROY_AH.invokeExact(e, ah));
    }

    @Override
    public AhAttr attr() {
        return attr;
    }
}
