// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.MethodSource;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.PostException;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * The fixture every conformance suite extends. Every suite runs once per {@link ConformanceSetup}
 * that a {@link SetupProvider} on the test class path offers (a JUnit class template: the report
 * shows each test under {@code [setup]}); a test that needs a {@link Capability} the setup lacks
 * ({@link Requires}) is skipped with the reason. The setup opens the device under test
 * ({@link #openContext()}) and the device at the other end of connections ({@link #openPeerContext()}).
 *
 * <p>Per test it opens the contexts, hands out native memory from a shared arena, and closes every
 * resource made through its helpers in reverse order of creation (QPs before CQs and PDs, MWs before
 * MRs) after the test, then the arena. It brings pairs of RC/UC/UD queue pairs up to RTS through
 * the public API only ({@link #connect}). Waiting is bounded: {@link #pollOne} gives up after
 * {@link #TIMEOUT_MS}; "nothing arrives" checks poll for {@link #QUIET_MS}.
 */
@ParameterizedClass(name = "[{0}]")
@MethodSource("org.rdma4j.conformance.Setups#all")
@ExtendWith(CapabilityCondition.class)
public abstract class AbstractVerbsTest {
    /** How long anything that should happen may take before the test fails (generous for slow CI). */
    public static final long TIMEOUT_MS = 10_000;
    /** How long a "nothing arrives" check watches. */
    public static final long QUIET_MS = 200;
    public static final long PAGE_SIZE = 4096;
    /** Fills memory nobody should write, so stray writes show up. */
    public static final byte GUARD = (byte) 0xA5;
    public static final int DEFAULT_QKEY = 0x11111111;
    /** MR access for data buffers: everything a remote peer may do. */
    public static final int MR_ALL = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ
            | Access.REMOTE_ATOMIC;
    /** QP access flags accepting every remote operation. */
    public static final int QP_ALL = Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC;

    /** The setup this run of the suite is on. */
    @Parameter
    protected ConformanceSetup setup;
    /** The device under test, opened before each test. */
    protected Context ctx;
    /** Native memory for the test, closed after it. */
    protected Arena arena;
    private Context peerCtx;

    /** {@return whether the running test's setup lacks {@link Capability#RELIABLE_LINK}} */
    protected static boolean lossyLink() {
        return BoundedWaits.lossyLink;
    }
    private final Deque<VerbsResource> resources = new ArrayDeque<>();
    private final PairConnections pairs = new PairConnections(this);

    /** A fresh open of the device under test: the setup's device, unless a suite needs another one. */
    protected Context openContext() {
        return setup.open();
    }

    /** The device at the other end of connections. */
    protected Context openPeerContext() {
        return setup.openPeer();
    }

    /** The local GID index connections use on {@code c} ({@link PairConnections#gidIndex}). */
    protected int gidIndex(Context c) {
        return pairs.gidIndex(c);
    }

    /**
     * Skips the test when the device cannot re-register memory at all: a no-op {@code rereg} of
     * {@code mr} (its own access again) answered EOPNOTSUPP, as Linux 6.1's rxe does (librxe has no
     * rereg_mr; a C program's ibv_rereg_mr gets the same).
     */
    protected static void assumeReregSupported(MemoryRegion mr) {
        try {
            mr.rereg(MemoryRegion.ReregFlag.CHANGE_ACCESS, null, mr.access());
        } catch (VerbsException e) {
            org.junit.jupiter.api.Assumptions.assumeTrue(e.errno() != Errno.EOPNOTSUPP,
                    "the device has no rereg_mr (ibv_rereg_mr answers EOPNOTSUPP): " + e.getMessage());
            throw e;
        }
    }

    @BeforeEach
    final void openDevice() {
        BoundedWaits.lossyLink = !setup.has(Capability.RELIABLE_LINK);
        BoundedWaits.qpStateUnreported = setup.qpStateUnreported();
        Waiters.nativeWaits = setup.has(Capability.WAITS_IN_NATIVE_CODE);
        arena = Arena.ofShared();
        ctx = openContext();
    }

    /** The peer context, opened on first use. */
    protected final Context peer() {
        if (peerCtx == null) {
            peerCtx = openPeerContext();
        }
        return peerCtx;
    }

    @AfterEach
    final void closeEverything() {
        if (arena == null) {
            return;
        }
        List<VerbsResource> failed = new ArrayList<>();
        List<Throwable> errors = new ArrayList<>();
        // LIFO is a valid order unless a test re-pointed something (rereg to a later PD) or a close
        // was refused for a reason that goes away (an MR whose window closes later): retry once.
        for (int pass = 0; pass < 2; pass++) {
            failed.clear();
            errors.clear();
            while (!resources.isEmpty()) {
                VerbsResource r = resources.pop();
                try {
                    r.close();
                } catch (RuntimeException e) {
                    failed.add(r);
                    errors.add(e);
                }
            }
            resources.addAll(failed);
        }
        for (Context c : new Context[] {peerCtx, ctx}) {
            if (c != null) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    errors.add(e);
                }
            }
        }
        resources.clear();
        pairs.clear();
        peerCtx = null;
        if (failed.isEmpty()) {
            arena.close(); // only when no MR can still point into it
        }
        if (!errors.isEmpty()) {
            AssertionError e = new AssertionError("cleanup failed: " + errors.getFirst().getMessage());
            errors.forEach(e::addSuppressed);
            throw e;
        }
    }

    // ---------------------------------------------------------------- resources

    /** Closes {@code r} after the test (in reverse order of tracking); returns it. */
    protected final <T extends VerbsResource> T track(T r) {
        resources.push(r);
        return r;
    }

    protected final ProtectionDomain allocPd(Context c) {
        return track(c.allocPd());
    }

    protected final CompletionQueue createCq(Context c, int cqe) {
        return track(c.createCq(cqe));
    }

    protected final QueuePair createQp(ProtectionDomain pd, QpInitAttr attr) {
        return track(pd.createQp(attr));
    }

    /** A simple QP of {@code type} with its own CQ, in RESET. */
    protected final QueuePair createQp(ProtectionDomain pd, QpType type) {
        CompletionQueue cq = createCq(pd.context(), 16);
        return createQp(pd, new QpInitAttr(type, cq, cq));
    }

    /** {@code bytes} of page-aligned native memory filled with {@link #GUARD}. */
    protected final MemorySegment allocate(long bytes) {
        MemorySegment s = arena.allocate(Math.max(bytes, 1), PAGE_SIZE);
        s.fill(GUARD);
        return s;
    }

    /** Registers {@code bytes} of fresh memory (filled with {@link #GUARD}) in {@code pd}. */
    protected final MemoryRegion register(ProtectionDomain pd, long bytes, int access) {
        return track(pd.regMr(allocate(bytes), access));
    }

    protected final MemoryRegion register(Endpoint e, long bytes, int access) {
        return register(e.pd(), bytes, access);
    }

    protected final DeviceAttr deviceAttr() {
        return ctx.queryDevice();
    }

    protected final PortAttr portAttr() {
        return ctx.queryPort(1);
    }

    /** Skips the test when the ports cannot run {@code mtu}. */
    protected final void assumeMtu(Mtu mtu) {
        int local = ctx.queryPort(1).activeMtu().bytes();
        int remote = peer().queryPort(1).activeMtu().bytes();
        assumeTrue(mtu.bytes() <= Math.min(local, remote),
                "path MTU " + mtu.bytes() + " above the active MTU of the ports (" + local + ", " + remote + ")");
    }

    // ---------------------------------------------------------------- connections

    public final PairSpec spec(QpType type) {
        return new PairSpec(type);
    }

    /** Creates both sides of {@code s} and brings them up to RTS connected to each other. */
    protected final QpPair connect(PairSpec s) {
        return pairs.connect(s);
    }

    /** Aborts the test, with the setup's reason, when its QPs cannot be connected by modify_qp. */
    protected final void assumeModifyQpConnects() {
        pairs.assumeModifyQpConnects();
    }

    /** Moves both QPs of {@code p} to RESET and brings them up again, with fresh PSNs. */
    protected final void reconnect(QpPair p) {
        pairs.reconnect(p);
    }

    /**
     * Brings a lone {@code qp} from RESET up to {@code upTo} (INIT, RTR or RTS) connected to itself
     * (its own GID and QPN), with the required masks only.
     */
    protected final void bringUpSelfConnected(QueuePair qp, QpState upTo) {
        pairs.bringUpSelfConnected(qp, upTo);
    }

    // ---------------------------------------------------------------- work requests

    /** A signaled work request of {@code opcode}. */
    protected static SendWorkRequest wr(long wrId, WrOpcode opcode) {
        return new SendWorkRequest().wrId(wrId).opcode(opcode).flags(SendFlag.SIGNALED);
    }

    /** Posts one receive of {@code len} bytes at {@code off} in {@code mr}. */
    protected static void postRecv(Endpoint e, long wrId, MemoryRegion mr, long off, int len) {
        e.qp().postRecv(new RecvWorkRequest().wrId(wrId).sge(mr, off, len));
    }

    /** The address of {@code off} in {@code mr}. */
    protected static long addr(MemoryRegion mr, long off) {
        return mr.address() + off;
    }

    // ---------------------------------------------------------------- completions, events, states (BoundedWaits)

    /** Spins on {@code cq} until one completion arrives; fails the test after {@code timeoutMs}. */
    protected static WorkCompletion pollOne(CompletionQueue cq, long timeoutMs) {
        return BoundedWaits.pollOne(cq, timeoutMs);
    }

    protected static WorkCompletion pollOne(CompletionQueue cq) {
        return pollOne(cq, TIMEOUT_MS);
    }

    /** Polls exactly {@code n} completions (each within the timeout). */
    protected static List<WorkCompletion> poll(CompletionQueue cq, int n) {
        List<WorkCompletion> l = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            l.add(pollOne(cq));
        }
        return l;
    }

    /** Watches {@code cq} for {@code quietMs} and fails if any completion arrives. */
    protected static void assertNoCompletion(CompletionQueue cq, long quietMs, String why) {
        BoundedWaits.assertNoCompletion(cq, quietMs, why);
    }

    protected static void assertNoCompletion(CompletionQueue cq, String why) {
        assertNoCompletion(cq, QUIET_MS, why);
    }

    /** The next completion on {@code cq} must be {@code wrId} with {@code status}. */
    protected static WorkCompletion expect(CompletionQueue cq, long wrId, WcStatus status) {
        return BoundedWaits.expect(cq, wrId, status);
    }

    /** Skips the test when a lossy link lost the NAK that would have given {@code expected}. */
    protected static void assumeNakNotLost(WorkCompletion wc, WcStatus expected) {
        BoundedWaits.assumeNakNotLost(wc, expected);
    }

    /** The next completion on {@code cq} must be a successful {@code opcode} for {@code wrId}. */
    protected static WorkCompletion expect(CompletionQueue cq, long wrId, WcOpcode opcode) {
        return BoundedWaits.expect(cq, wrId, opcode);
    }

    /** Waits for an async event of {@code type} on {@code c}, acking every event; fails after {@code timeoutMs}. */
    protected static AsyncEvent awaitAsyncEvent(Context c, AsyncEventType type, long timeoutMs)
            throws InterruptedException {
        return BoundedWaits.awaitAsyncEvent(c, type, timeoutMs);
    }

    protected static AsyncEvent awaitAsyncEvent(Context c, AsyncEventType type) throws InterruptedException {
        return awaitAsyncEvent(c, type, TIMEOUT_MS);
    }

    /** Watches {@code c} for {@code quietMs} and fails on an event of {@code type}. */
    protected static void assertNoAsyncEvent(Context c, AsyncEventType type, long quietMs)
            throws InterruptedException {
        BoundedWaits.assertNoAsyncEvent(c, type, quietMs);
    }

    /** Waits until {@code ibv_query_qp} reports {@code state}; fails after the timeout. */
    protected static void awaitQpState(QueuePair qp, QpState state) {
        BoundedWaits.awaitQpState(qp, state);
    }

    protected static void assertQpState(QueuePair qp, QpState state) {
        BoundedWaits.assertQpState(qp, state);
    }

    /** Aborts the test here, with the setup's reason, when its device's query_qp reports no state. */
    protected static void assumeQpStateReported() {
        BoundedWaits.assumeQpStateReported();
    }

    /** Skips the test when either device has no atomics ({@code atomic_cap} ATOMIC_NONE). */
    protected final void assumeAtomics() {
        assumeTrue(ctx.queryDevice().atomicCap() != DeviceAttr.AtomicCap.ATOMIC_NONE
                        && peer().queryDevice().atomicCap() != DeviceAttr.AtomicCap.ATOMIC_NONE,
                "the device has no atomics (atomic_cap ATOMIC_NONE): ibv_post_send of an atomic is EINVAL");
    }

    // ---------------------------------------------------------------- errors

    /** {@code call} must throw a {@link VerbsException} with {@code errno}. */
    protected static VerbsException assertErrno(int errno, Executable call) {
        VerbsException e = assertThrows(VerbsException.class, call, () -> "expected " + Errno.name(errno));
        assertEquals(Errno.name(errno), Errno.name(e.errno()), e::getMessage);
        return e;
    }

    /** {@code call} must throw a {@link PostException} with {@code errno}. */
    protected static PostException assertPostErrno(int errno, Executable call) {
        PostException e = assertThrows(PostException.class, call, () -> "expected a post to fail " + Errno.name(errno));
        assertEquals(Errno.name(errno), Errno.name(e.errno()), e::getMessage);
        return e;
    }

    // ---------------------------------------------------------------- bytes (Patterns)

    /** Byte {@code i} of the test pattern {@code seed}: no short period, so misplaced packets show. */
    protected static byte patternByte(int seed, long i) {
        return Patterns.patternByte(seed, i);
    }

    protected static void fillPattern(MemorySegment s, long off, long len, int seed) {
        fillPattern(s, off, len, seed, 0);
    }

    /** Writes bytes {@code [from, from+len)} of pattern {@code seed} to {@code s[off, off+len)}. */
    protected static void fillPattern(MemorySegment s, long off, long len, int seed, long from) {
        Patterns.fillPattern(s, off, len, seed, from);
    }

    /** {@code s[off, off+len)} must hold pattern {@code seed} from its start. */
    protected static void assertPattern(MemorySegment s, long off, long len, int seed, String what) {
        assertPattern(s, off, len, seed, 0, what);
    }

    /** {@code s[off, off+len)} must hold bytes {@code [from, from+len)} of pattern {@code seed}. */
    protected static void assertPattern(MemorySegment s, long off, long len, int seed, long from, String what) {
        Patterns.assertPattern(s, off, len, seed, from, what);
    }

    /** {@code s[from, to)} must still be {@link #GUARD}. */
    protected static void assertGuard(MemorySegment s, long from, long to, String what) {
        Patterns.assertGuard(s, from, to, what);
    }

    /** All of {@code mr} except {@code [off, off+len)} must still be {@link #GUARD}. */
    protected static void assertGuardAround(MemoryRegion mr, long off, long len, String what) {
        assertGuard(mr.segment(), 0, off, what + " (before)");
        assertGuard(mr.segment(), off + len, mr.segment().byteSize(), what + " (after)");
    }

    protected static long getLong(MemoryRegion mr, long off) {
        return mr.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, off);
    }

    protected static void putLong(MemoryRegion mr, long off, long v) {
        mr.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, off, v);
    }
}
