// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.lang.foreign.MemorySegment;
import org.rdma4j.soft.engine.KeyHolder;
import org.rdma4j.soft.engine.MemKey;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractPdResource;
import org.rdma4j.verbs.spi.MrAccessRules;
import org.rdma4j.verbs.spi.MrMemoryRules;

/** A soft memory region: a key table entry over a memory segment. Thread safe. */
final class SoftMr extends AbstractPdResource<SoftPd> implements MemoryRegion, KeyHolder {
    private volatile MemorySegment segment;
    private final MemKey key = new MemKey(MemKey.MR);

    SoftMr(SoftPd pd, MemorySegment segment, int access) {
        super(pd);
        checkAccess(access);
        checkSegment(segment, access, "ibv_reg_mr");
        this.segment = segment;
        key.pd = pd;
        key.segment = segment;
        key.base = segment.address();
        key.start = segment.address();
        key.length = segment.byteSize();
        key.access = access;
        pd.context().device.claim(ResourceLimits.Kind.MR, () -> uses(pd));
        // Only now, with the PD held, does the key exist: a create that lost a race leaves no valid rkey.
        pd.context().hca.keys.insert(key);
        key.valid = true;
    }

    /** What ibv_reg_mr refuses about the memory itself: the SPI's rules, as on every provider. */
    private static void checkSegment(MemorySegment segment, int access, String verb) {
        MrMemoryRules.check(segment, verb); // null, heap, closed, zero bytes, confined
        MrMemoryRules.checkWritable(segment, access, verb);
    }

    static void checkAccess(int access) {
        MrAccessRules.check(access);
    }

    @Override
    public MemKey memKey() {
        return key;
    }

    @Override
    protected String describe() {
        return "MR lkey 0x" + Integer.toHexString(key.key);
    }

    /**
     * Deregistration is refused only while a window is bound to the region (as rxe_dereg_mr). Work
     * requests that name it do not hold it: one that runs afterwards finds no key and fails as with a
     * bad lkey (a send LOC_PROT_ERR, a receive LOC_QP_OP_ERR), so none can keep it busy after its QP
     * or SRQ is gone. The check and the
     * invalidation are one step against a bind running now ({@link MemKey#deregisterUnlessBound});
     * {@code close()} destroys at once when this says 0.
     */
    @Override
    protected int busyReason() {
        return key.deregisterUnlessBound() ? 0 : Errno.EBUSY;
    }

    @Override
    protected void destroy() {
        pd().context().hca.keys.remove(key.key);
        pd().context().device.release(ResourceLimits.Kind.MR);
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public long address() {
        return key.start;
    }

    @Override
    public long length() {
        return key.length;
    }

    @Override
    public int lkey() {
        return key.key;
    }

    @Override
    public int rkey() {
        return key.key;
    }

    @Override
    public int access() {
        return key.access;
    }

    @Override
    public synchronized void rereg(int flags, ProtectionDomain newPd, MemorySegment newSegment, int newAccess) {
        ensureOpen();
        int known = ReregFlag.CHANGE_PD | ReregFlag.CHANGE_ACCESS | ReregFlag.CHANGE_TRANSLATION;
        if ((flags & ~known) != 0 || flags == 0) {
            throw new VerbsException(Errno.EINVAL, "rereg flags 0x" + Integer.toHexString(flags));
        }
        // the registration ended when its memory's arena closed (as on every provider)
        MrMemoryRules.checkStillRegistered(segment, "ibv_rereg_mr");
        boolean translation = (flags & ReregFlag.CHANGE_TRANSLATION) != 0;
        SoftPd target = pd();
        if ((flags & ReregFlag.CHANGE_PD) != 0) {
            target = SoftPd.same(target.context(), newPd);
            target.ensureOpen();
        }
        int access = key.access;
        if ((flags & ReregFlag.CHANGE_ACCESS) != 0) {
            checkAccess(newAccess);
            access = newAccess;
        }
        if (translation) {
            checkSegment(newSegment, access, "ibv_rereg_mr");
        } else {
            MrMemoryRules.checkWritable(segment, access, "ibv_rereg_mr");
        }
        synchronized (key) { // against a bind claiming the region (MemKey.bind)
            if (key.boundWindows.get() > 0) {
                throw new VerbsException(Errno.EBUSY, "windows are bound to this region");
            }
            // Claimed before the key goes invalid: a target PD closed meanwhile fails the rereg and
            // leaves the region as it was.
            movePd(target);
            apply(target, access, translation ? newSegment : null);
        }
    }

    /**
     * Re-points the key (under its lock, windows unbound): posted work requests that run afterwards
     * use the new PD, access and memory, or fail their checks as any other work request would.
     */
    private void apply(SoftPd target, int access, MemorySegment newSegment) {
        boolean translation = newSegment != null;
        key.valid = false;
        key.pd = target;
        key.access = access;
        if (translation) {
            // The keys stay (as a driver that re-registers in place); only the memory behind them moves.
            segment = newSegment;
            key.segment = newSegment;
            key.base = newSegment.address();
            key.start = newSegment.address();
            key.length = newSegment.byteSize();
        }
        key.valid = true;
    }
}
