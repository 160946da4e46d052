// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import org.rdma4j.soft.engine.KeyHolder;
import org.rdma4j.soft.engine.KeyTable;
import org.rdma4j.soft.engine.MemKey;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WrOpcode;
import org.rdma4j.verbs.spi.AbstractPdResource;

/** A soft memory window. Thread safe. */
final class SoftMw extends AbstractPdResource<SoftPd> implements MemoryWindow, KeyHolder {
    private final MwType type;
    private final MemKey key;

    SoftMw(SoftPd pd, MwType type) {
        super(pd);
        this.type = type;
        this.key = new MemKey(type == MwType.TYPE_1 ? MemKey.MW_TYPE1 : MemKey.MW_TYPE2);
        key.pd = pd;
        pd.context().device.claim(ResourceLimits.Kind.MW, () -> uses(pd));
        // Only now, with the PD held, does the key exist: a create that lost a race leaves no key.
        pd.context().hca.keys.insert(key);
    }

    @Override
    public MemKey memKey() {
        return key;
    }

    @Override
    protected String describe() {
        return "MW rkey 0x" + Integer.toHexString(key.key);
    }

    @Override
    protected void destroy() {
        key.free(); // unbound for good: a bind work request still queued completes MW_BIND_ERR
        pd().context().hca.keys.remove(key.key);
        pd().context().device.release(ResourceLimits.Kind.MW);
    }

    @Override
    public MwType type() {
        return type;
    }

    @Override
    public int rkey() {
        return key.key;
    }

    @Override
    public int nextRkey() {
        return KeyTable.incKey(key.key);
    }

    @Override
    public int bind(QueuePair qp, long wrId, int sendFlags, MemoryRegion mr, long addr, long length, int access) {
        ensureOpen();
        if (type != MwType.TYPE_1) {
            throw new VerbsException(Errno.EINVAL, "type-2 windows are bound with a BIND_MW work request");
        }
        if (!(qp instanceof SoftQp sq) || sq.pd() != pd()) {
            throw new VerbsException(Errno.EINVAL, "the QP must belong to the window's protection domain");
        }
        int newKey = nextRkey();
        SendWorkRequest wr = new SendWorkRequest().wrId(wrId).flags(sendFlags)
                .bindMw(this, newKey, mr, addr, length, access);
        wr.opcode(WrOpcode.BIND_MW);
        qp.postSend(wr);
        return newKey;
    }
}
