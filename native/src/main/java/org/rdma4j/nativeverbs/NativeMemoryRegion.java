// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.rdma4j.nativeverbs.abi.CLayout.offset;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.nativeverbs.abi.DeviceConstants;
import org.rdma4j.nativeverbs.abi.DeviceLayouts;
import org.rdma4j.nativeverbs.abi.Ibv;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.AbstractPdResource;
import org.rdma4j.verbs.spi.MrAccessRules;
import org.rdma4j.verbs.spi.MrMemoryRules;

/**
 * A registered memory region ({@code struct ibv_mr}). Only native memory can be registered
 * ({@link MrMemoryRules}): the kernel pins the pages at the segment's address, which a heap array does
 * not keep. The registration ends when its memory's arena closes, before the arena frees the memory
 * ({@link ArenaCloseHook}): the kernel would keep the freed pages pinned and a peer's WRITE would land
 * in memory the program reuses; afterwards the keys are invalid, so traffic fails as with a bad key
 * (LOC_PROT_ERR, REM_ACCESS_ERR), and {@link #close()} only does the bookkeeping. Thread safe.
 */
public final class NativeMemoryRegion extends AbstractPdResource<NativeProtectionDomain>
        implements MemoryRegion, NativeHandle {
    private static final long MR_ADDR = offset(DeviceLayouts.ibv_mr, "addr");
    private static final long MR_LENGTH = offset(DeviceLayouts.ibv_mr, "length");
    private static final long MR_LKEY = offset(DeviceLayouts.ibv_mr, "lkey");
    private static final long MR_RKEY = offset(DeviceLayouts.ibv_mr, "rkey");

    private final MemorySegment handle;
    private volatile MemorySegment segment;
    private volatile int access;
    // ibv_mr's fields, copied at registration and after rereg (the struct is freed by close)
    private volatile long address;
    private volatile long length;
    private volatile int lkey;
    private volatile int rkey;
    /** Tells this region when its memory's arena closes; guarded by this. */
    private ArenaCloseHook hook;
    /** The kernel's registration ended because the memory's arena closed; guarded by this. */
    private boolean released;

    NativeMemoryRegion(NativeProtectionDomain pd, MemorySegment segment, int access) {
        super(pd);
        // the SPI's rules, as on every provider: ZERO_BASED is EOPNOTSUPP (the iova is the address),
        // ON_DEMAND is the kernel's to judge (EOPNOTSUPP where the device does not page on demand)
        MrAccessRules.check(access, false, true);
        MrMemoryRules.check(segment, "ibv_reg_mr");
        MrMemoryRules.checkWritable(segment, access, "ibv_reg_mr");
        ArenaCloseHook h = ArenaCloseHook.attach(segment, "ibv_reg_mr"); // before the pages are pinned
        uses(pd);
        // the ibv_reg_mr macro of verbs.h calls ibv_reg_mr_iova2 (iova = addr) when access is not a constant
        MemorySegment mr = Downcalls.create(() -> "ibv_reg_mr(" + pd.context().device().name() + ", 0x"
                + Long.toHexString(segment.address()) + ", " + segment.byteSize() + " bytes, access "
                + org.rdma4j.verbs.Access.toString(access) + ")", this::abandon,
                e -> (MemorySegment) Ibv.ibv_reg_mr_iova2.invokeExact(e, pd.handle(), segment, segment.byteSize(),
                        segment.address(), access));
        this.handle = Native.at(mr, DeviceLayouts.ibv_mr.byteSize());
        this.segment = segment;
        this.access = access;
        readBack();
        this.hook = h;
        if (!h.arm(this::memoryClosing)) {
            memoryClosing(h); // the arena closed while the kernel registered it
        }
    }

    /**
     * The arena of the registered memory is closing (in the closing thread, before the memory is
     * freed): ends the kernel's registration now. A failure (a window still bound) is thrown to the
     * arena's close, which frees the memory anyway and then throws it.
     */
    private synchronized void memoryClosing(ArenaCloseHook h) {
        if (h != hook || released || isClosed()) {
            return;
        }
        deregister(" as the arena of its memory closes (the memory is freed while still registered)");
        released = true;
        hook = null;
    }

    private void readBack() {
        address = handle.get(ValueLayout.JAVA_LONG, MR_ADDR);
        length = handle.get(ValueLayout.JAVA_LONG, MR_LENGTH);
        lkey = handle.get(ValueLayout.JAVA_INT, MR_LKEY);
        rkey = handle.get(ValueLayout.JAVA_INT, MR_RKEY);
    }

    /** The {@code struct ibv_mr *}. */
    @Override
    public MemorySegment handle() {
        return handle;
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    @Override
    public int access() {
        return access;
    }

    @Override
    public synchronized void rereg(int flags, ProtectionDomain newPd, MemorySegment newSegment, int newAccess) {
        ensureOpen();
        if (flags == 0 || (flags & ~DeviceConstants.IBV_REREG_MR_FLAGS_SUPPORTED) != 0) {
            throw new VerbsException(Errno.EINVAL, "ibv_rereg_mr: bad flags 0x" + Integer.toHexString(flags));
        }
        MrMemoryRules.checkStillRegistered(segment, "ibv_rereg_mr");
        boolean translation = (flags & DeviceConstants.IBV_REREG_MR_CHANGE_TRANSLATION) != 0;
        boolean changePd = (flags & DeviceConstants.IBV_REREG_MR_CHANGE_PD) != 0;
        boolean changeAccess = (flags & DeviceConstants.IBV_REREG_MR_CHANGE_ACCESS) != 0;
        NativeProtectionDomain target = pd();
        if (changePd) {
            if (!(newPd instanceof NativeProtectionDomain n) || n.context() != target.context()) {
                throw new VerbsException(Errno.EINVAL, "ibv_rereg_mr: the new PD is not of " + target.context());
            }
            n.ensureOpen();
            target = n;
        }
        if (changeAccess) {
            MrAccessRules.check(newAccess, false, true);
        }
        if (translation) {
            MrMemoryRules.check(newSegment, "ibv_rereg_mr");
        }
        MrMemoryRules.checkWritable(translation ? newSegment : segment, changeAccess ? newAccess : access,
                "ibv_rereg_mr");
        ArenaCloseHook newHook = translation ? ArenaCloseHook.attach(newSegment, "ibv_rereg_mr") : null;
        MemorySegment pdArg = changePd ? target.handle() : MemorySegment.NULL;
        MemorySegment addrArg = translation ? newSegment : MemorySegment.NULL;
        long lengthArg = translation ? newSegment.byteSize() : 0L;
        int accessArg = changeAccess ? newAccess : 0;
        int rc = Downcalls.status(e -> (int) Ibv.ibv_rereg_mr.invokeExact(e, handle, flags, pdArg, addrArg, lengthArg,
                accessArg));
        if (rc != 0) {
            // a negative IBV_REREG_MR_ERR_* code with errno set; the region stays as it was for
            // ERR_INPUT and ERR_DONT_FORK_NEW, is unusable for the others (the caller should close it)
            throw Downcalls.fail(0, "ibv_rereg_mr(" + describe() + ", flags " + flags + ") [code " + rc + "]");
        }
        if (changePd) {
            movePd(target);
        }
        if (changeAccess) {
            access = newAccess;
        }
        readBack();
        if (translation) {
            segment = newSegment;
            hook.disarm();
            hook = newHook;
            if (!newHook.arm(this::memoryClosing)) {
                memoryClosing(newHook); // the new memory's arena closed meanwhile
            }
        }
    }

    @Override
    protected String describe() {
        return "MR lkey 0x" + Integer.toHexString(lkey);
    }

    @Override
    protected void destroy() {
        // under close's lock, which memoryClosing takes too
        if (released) {
            return; // the kernel's registration ended when the memory's arena closed
        }
        deregister("");
        hook.disarm();
        hook = null;
    }

    private void deregister(String when) {
        Downcalls.check(() -> "ibv_dereg_mr(" + describe() + ")" + when,
                e -> (int) Ibv.ibv_dereg_mr.invokeExact(e, handle));
    }
}
