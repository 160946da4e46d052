package org.rdma4j.nativeverbs;

import org.rdma4j.verbs.*;
import org.rdma4j.verbs.spi.AbstractResource;

/** Placeholder: the native address handle is written by the data-path work; creating one fails with EOPNOTSUPP. */
@SuppressWarnings("unused")
final class NativeAddressHandle extends AbstractResource implements AddressHandle {
    NativeAddressHandle(NativeProtectionDomain pd, AhAttr attr) {
        throw new VerbsException(Errno.EOPNOTSUPP, "native address handle: not implemented yet");
    }

    @Override
    protected String describe() {
        return "native address handle";
    }

    @Override
    protected void destroy() {}

    @Override public ProtectionDomain pd() { throw new UnsupportedOperationException(); }
    @Override public AhAttr attr() { throw new UnsupportedOperationException(); }
}
