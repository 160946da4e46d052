// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.spi.MrMemoryRules;

/**
 * The device half of the native provider on a real device (rxe0 in the interop VM); skipped, with the
 * provider's unavailability cause, where there is none. Every wait is bounded.
 */
class NativeDeviceTest {
    private Context ctx;

    @BeforeEach
    void open() {
        Assumptions.assumeTrue(NativeVerbs.isAvailable(), () -> "no native device: " + NativeVerbs.unavailabilityCause());
        ctx = new NativeProvider().devices().getFirst().open();
    }

    @AfterEach
    void close() {
        if (ctx != null) {
            ctx.close();
        }
    }

    private static int errno(Runnable r) {
        return assertThrows(VerbsException.class, r::run).errno();
    }

    @Test
    void queries() {
        DeviceAttr a = ctx.queryDevice();
        assertTrue(a.physPortCnt() >= 1);
        assertTrue(a.maxQp() > 0 && a.maxCqe() > 0 && a.maxMr() > 0, a.toString());
        assertEquals(ctx.device().guid(), a.nodeGuid());
        PortAttr p = ctx.queryPort(1);
        assertTrue(p.gidTblLen() > 0);
        assertTrue(p.activeMtu() != null);
        assertEquals(Errno.EINVAL, errno(() -> ctx.queryPort(a.physPortCnt() + 1)));
        GidEntry g = ctx.queryGidEntry(1, 0);
        assertEquals(0, g.index());
        assertEquals(1, g.portNum());
        assertFalse(g.gid().isZero());
        assertEquals(g.gid(), ctx.queryGid(1, 0));
        assertEquals(Errno.EINVAL, errno(() -> ctx.queryGidEntry(1, p.gidTblLen())));
        assertEquals(0xffff, ctx.queryPkey(1, 0)); // the default full-membership P_Key
        assertFalse(ctx.counters(1).isEmpty());
        assertTrue(ctx.counters(99).isEmpty());
    }

    @Test
    void memoryRegions() {
        try (Arena arena = Arena.ofShared(); ProtectionDomain pd = ctx.allocPd()) {
            MemorySegment buf = arena.allocate(8192, 4096);
            int access = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;
            MemoryRegion mr = pd.regMr(buf, access);
            assertEquals(buf.address(), mr.address());
            assertEquals(8192, mr.length());
            assertNotEquals(0, mr.lkey());
            assertEquals(access, mr.access());
            assertSame(pd, mr.pd());
            assertEquals(Errno.EBUSY, errno(pd::close));
            VerbsException heap = assertThrows(VerbsException.class, () -> pd.regMr(MemorySegment.ofArray(new byte[64]),
                    Access.LOCAL_WRITE));
            assertEquals(Errno.EINVAL, heap.errno());
            assertTrue(heap.getMessage().contains("a heap segment cannot be registered"), heap.getMessage());
            VerbsException sameAsSoft = assertThrows(VerbsException.class,
                    () -> MrMemoryRules.check(MemorySegment.ofArray(new byte[64]), "ibv_reg_mr"));
            assertEquals(sameAsSoft.getMessage(), heap.getMessage(), "the one message of every provider");
            assertEquals(Errno.EINVAL, errno(() -> pd.regMr(buf, Access.REMOTE_WRITE)));
            try {
                mr.rereg(MemoryRegion.ReregFlag.CHANGE_ACCESS, null, Access.LOCAL_WRITE);
                assertEquals(Access.LOCAL_WRITE, mr.access());
            } catch (VerbsException e) {
                assertEquals(Errno.EOPNOTSUPP, e.errno(), e.getMessage()); // rxe has no rereg
                assertEquals(access, mr.access());
            }
            assertEquals(Errno.EINVAL, errno(() -> mr.rereg(0, null, 0)));
            mr.close();
            assertTrue(mr.isClosed());
        }
    }

    @Test
    void memoryWindows() {
        Assumptions.assumeTrue((ctx.queryDevice().deviceCapFlags() & (1 << 17)) != 0, "no IBV_DEVICE_MEM_WINDOW");
        try (ProtectionDomain pd = ctx.allocPd()) {
            try (MemoryWindow w1 = pd.allocMw(MwType.TYPE_1); MemoryWindow w2 = pd.allocMw(MwType.TYPE_2)) {
                assertEquals(MwType.TYPE_1, w1.type());
                assertEquals(MwType.TYPE_2, w2.type());
                assertEquals((w2.rkey() & ~0xff) | ((w2.rkey() + 1) & 0xff), w2.nextRkey());
                assertEquals(Errno.EBUSY, errno(pd::close));
            }
            assertEquals(Errno.EINVAL, errno(() -> pd.allocMw(3)));
        }
    }

    @Test
    void channelWaitsAreBoundedAndCloseWakesWaiters() throws Exception {
        CompletionChannel ch = ctx.createCompletionChannel();
        assertNull(ch.getEvent(0));
        assertNull(ch.getEvent(20));
        assertFalse(ch.hasEvent());
        assertEquals(Errno.EBUSY, errno(ctx::close));
        CompletableFuture<Integer> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                ch.getEvent(-1);
                return 0;
            } catch (VerbsException e) {
                return e.errno();
            } catch (InterruptedException e) {
                return -1;
            }
        });
        ch.close(); // before or during the wait: either way the waiter gets EBADF
        assertEquals(Errno.EBADF, waiter.get(10, TimeUnit.SECONDS));
        assertEquals(Errno.EBADF, errno(() -> {
            try {
                ch.getEvent(0);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }));
        assertFalse(ch.hasEvent());
    }

    @Test
    void asyncEventWaitsAreBoundedAndCloseWakesWaiters() throws Exception {
        assertNull(ctx.getAsyncEvent(0));
        assertNull(ctx.getAsyncEvent(20));
        assertFalse(ctx.hasAsyncEvent());
        Context other = ctx.device().open();
        CompletableFuture<Integer> waiter = CompletableFuture.supplyAsync(() -> {
            try {
                other.getAsyncEvent(-1);
                return 0;
            } catch (VerbsException e) {
                return e.errno();
            } catch (InterruptedException e) {
                return -1;
            }
        });
        other.close();
        assertEquals(Errno.EBADF, waiter.get(10, TimeUnit.SECONDS));
    }

    @Test
    void eventPoller() throws Exception {
        CompletionChannel ch = ctx.createCompletionChannel();
        try (EventPoller poller = ctx.createEventPoller()) {
            poller.add(ch);
            poller.add(ctx);
            assertEquals(Errno.EEXIST, errno(() -> poller.add(ch)));
            assertEquals(0, poller.poll(0));
            assertEquals(0, poller.poll(20));
            poller.wakeup();
            assertEquals(0, poller.poll(-1)); // returns at once: the wakeup came first
            ch.close();
            assertEquals(1, poller.poll(5_000));
            assertSame(ch, poller.source(0));
            assertEquals(EventPoller.CLOSED, poller.events(0));
            assertFalse(poller.remove(ch)); // reported once, then gone
            assertTrue(poller.remove(ctx));
            CompletableFuture<Integer> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    poller.poll(-1);
                    return 0;
                } catch (VerbsException e) {
                    return e.errno();
                } catch (InterruptedException e) {
                    return -1;
                }
            });
            poller.close();
            assertEquals(Errno.EBADF, waiter.get(10, TimeUnit.SECONDS));
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        }
    }
}
