// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.tools.device.GidText;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.IdleStrategy;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.PreparedQueuePair;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.QueuePairBuilder;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.VerbsResource;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.spi.QpTransitions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j demo}: a guided tour of the verbs API on the embedded soft device, printing every
 * step: find and open the device, query it, allocate a PD, register memory, create a CQ on a
 * completion channel, create two RC queue pairs and connect them to each other (QP-to-QP loopback on
 * one device), move bytes (a SEND, an RDMA WRITE, then a ping-pong, SEND/RECV round trips and a
 * bandwidth run, with their figures), and tear everything down children first.
 *
 * <p>The tour is three phases: {@link #setUp} (the control path), {@link #moveData} (the data path,
 * its traffic in {@link DemoTraffic}) and {@link #tearDown}. Exit code 0, or 1 if any of it failed.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"A guided tour of the verbs API, step by step, on the embedded soft RoCEv2 device (or the "
                + "one -d names, or a soft device over UDP on --bind's address).",
            "The steps: open, query, PD, MR, CQ, two RC QPs connected to each other and brought to RTS, data (a "
                + "SEND, an RDMA WRITE, a ping-pong, SEND/RECV round trips, a 64 KiB RDMA WRITE stream, with latency "
                + "and bandwidth), tear-down."})
public final class DemoCommand implements Callable<Integer> {
    private static final int PORT = 1;
    private static final long MR_BYTES = 1 << 20;
    /** A's buffers are in the first half of the MR, B's in the second. */
    private static final long B_HALF = MR_BYTES / 2;
    private static final int CQ_ENTRIES = 64;
    private static final long DATA_TIMEOUT_MS = 2000;
    private static final int PING_PONG_WARMUP = 2_000;
    private static final int PING_PONG_ITERATIONS = 10_000;
    private static final int SEND_RECV_WARMUP = 1_000;
    private static final int SEND_RECV_ITERATIONS = 5_000;
    private static final int BANDWIDTH_BYTES = 64 * 1024;
    private static final int BANDWIDTH_DEPTH = 16;
    private static final long BANDWIDTH_MESSAGES = 20_000;
    private static final long BANDWIDTH_MAX_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Each latency section stops after this long even if its round trips are not all done (slow CI). */
    private static final long SECTION_BUDGET_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final ValueLayout.OfLong BE_LONG =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    @Spec
    private CommandSpec spec;

    @Option(names = {"-d", "--ib-dev"}, paramLabel = "<dev>", defaultValue = "soft0",
            description = "the device to tour (default: ${DEFAULT-VALUE})")
    private String deviceName;

    @picocli.CommandLine.Mixin
    private DeviceOptions deviceOptions;

    private PrintWriter out;
    private int step;

    /** Every resource of the tour; fields are null until created. */
    static final class Tour {
        Context ctx;
        DeviceAttr deviceAttr;
        PortAttr portAttr;
        int sgidIndex;
        Gid gid;
        ProtectionDomain pd;
        MemoryRegion mr;
        CompletionChannel channel;
        CompletionQueue cq;
        QueuePair qpA;
        QueuePair qpB;
    }

    @Override
    public Integer call() {
        out = spec.commandLine().getOut();
        // the device first, so the banner names the one toured and a wrong -d fails before it
        if (deviceOptions.bindAddress() != null) {
            deviceName = deviceOptions.resolve(
                    spec.commandLine().getParseResult().hasMatchedOption("-d") ? deviceName : null).name();
        } else {
            Verbs.device(deviceName); // ENODEV naming the devices there are
        }
        out.printf("rdma4j demo: the verbs API on %s, step by step%n", deviceName);
        int rc = 0;
        try (Arena arena = Arena.ofShared()) {
            Tour tour = new Tour();
            try {
                setUp(tour, arena);
                rc = moveData(tour);
            } catch (RuntimeException e) {
                tearDownAfterFailure(tour, e);
                throw e;
            }
            tearDown(tour);
        } finally {
            deviceOptions.release();
            out.flush();
        }
        out.printf("%ndone%s%n", rc == 0 ? ": every resource released." : ", with the failures above.");
        out.flush();
        return rc;
    }

    // ---------------------------------------------------------------------------------------------
    // The control path.

    private void setUp(Tour t, Arena arena) {
        step("List the RDMA devices", "ibv_get_device_list");
        for (Device d : Verbs.devices()) {
            out.printf("   %-10s provider %-6s node GUID %016x%n", d.name(), d.provider(), d.guid());
        }

        if (deviceOptions.bindAddress() != null) {
            out.printf("   created %s: RoCEv2 over UDP on %s%n", deviceName,
                    deviceOptions.bindAddress().getHostAddress());
        }
        step("Open " + deviceName, "ibv_open_device");
        t.ctx = Verbs.open(deviceName);
        out.printf("   opened %s%n", t.ctx.device().name());

        step("Query the device", "ibv_query_device");
        DeviceAttr a = t.ctx.queryDevice();
        t.deviceAttr = a;
        out.printf("   fw_ver %s, node_guid %s, vendor_id 0x%04x, phys_port_cnt %d%n",
                a.fwVer(), DevinfoCommand.guid(a.nodeGuid()), a.vendorId(), a.physPortCnt());
        out.printf("   max_qp %d, max_qp_wr %d, max_sge %d, max_cq %d, max_cqe %d%n",
                a.maxQp(), a.maxQpWr(), a.maxSge(), a.maxCq(), a.maxCqe());
        out.printf("   max_mr %d, max_mr_size 0x%x, max_inline_data %d, max_qp_rd_atom %d, atomic_cap %s%n",
                a.maxMr(), a.maxMrSize(), a.maxInlineData(), a.maxQpRdAtom(), a.atomicCap());

        step("Query port " + PORT, "ibv_query_port");
        PortAttr p = t.ctx.queryPort(PORT);
        t.portAttr = p;
        out.printf("   state %s (%d), max_mtu %d (%d), active_mtu %d (%d), link_layer %s, gid_tbl_len %d%n",
                p.state().label(), p.state().value(), p.maxMtu().bytes(), p.maxMtu().value(),
                p.activeMtu().bytes(), p.activeMtu().value(), p.linkLayer().label(), p.gidTblLen());

        step("Read the GID table of port " + PORT, "ibv_query_gid_ex");
        for (int i = 0; i < p.gidTblLen(); i++) {
            GidEntry e;
            try {
                e = t.ctx.queryGidEntry(PORT, i);
            } catch (VerbsException ex) {
                if (ex.errno() == Errno.ENODATA) {
                    continue; // an empty entry
                }
                throw ex;
            }
            if (e.gid().isZero()) {
                continue;
            }
            String text = e.type() == GidEntry.GidType.ROCE_V2 ? GidText.inetNtop(e.gid()) : GidText.full(e.gid());
            out.printf("   GID[%3d]  %-40s %s%n", i, text, e.type().label());
        }
        // What QueuePairBuilder picks by default: RoCE v2 (routable UDP/IP, what the soft device speaks)
        // with a global or IPv4-mapped address over a link-local one, as an rxe user would.
        t.sgidIndex = QueuePairBuilder.defaultGidIndex(t.ctx, PORT);
        t.gid = t.ctx.queryGid(PORT, t.sgidIndex);
        out.printf("   the QPs will address each other through GID[%d]%n", t.sgidIndex);

        step("Allocate a protection domain", "ibv_alloc_pd");
        t.pd = t.ctx.allocPd();
        out.printf("   allocated %s%n", t.pd);

        step("Register 1 MiB of native memory", "ibv_reg_mr");
        MemorySegment memory = arena.allocate(MR_BYTES, 4096);
        int access = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;
        t.mr = t.pd.regMr(memory, access);
        out.printf("   addr 0x%x, length %d, access %s%n", t.mr.address(), t.mr.length(),
                Access.toString(t.mr.access()));
        out.printf("   lkey 0x%08x (local work requests name the memory with it)%n", t.mr.lkey());
        out.printf("   rkey 0x%08x (a peer needs it, with the address, to READ or WRITE here)%n", t.mr.rkey());

        step("Create a completion channel and a completion queue", "ibv_create_comp_channel, ibv_create_cq");
        t.channel = t.ctx.createCompletionChannel();
        t.cq = t.ctx.createCq(CQ_ENTRIES, t.channel, 0);
        out.printf("   CQ with %d entries (asked for %d); its completion events go to the channel%n",
                t.cq.cqe(), CQ_ENTRIES);

        step("Create two RC queue pairs, A and B, sharing the CQ", "ibv_create_qp");
        QpCap cap = new QpCap(16, 16, 1, 1, Math.min(64, a.maxInlineData()));
        t.qpA = t.pd.createQp(new QpInitAttr(QpType.RC, t.cq, t.cq).cap(cap));
        t.qpB = t.pd.createQp(new QpInitAttr(QpType.RC, t.cq, t.cq).cap(cap.copy()));
        out.printf("   A: qpn 0x%06x, state %s, %s%n", t.qpA.qpn(), t.qpA.state(), t.qpA.cap());
        out.printf("   B: qpn 0x%06x, state %s, %s%n", t.qpB.qpn(), t.qpB.state(), t.qpB.cap());

        step("Connect A to B and B to A, and bring both to RTS", "ibv_modify_qp");
        connect(t);

        step("Query QP A", "ibv_query_qp");
        QpAttr q = t.qpA.query();
        out.printf("   state %s, path_mtu %d, dest_qp_num 0x%06x, sq_psn 0x%06x, rq_psn 0x%06x%n",
                q.qpState, q.pathMtu.bytes(), q.destQpNum, q.sqPsn, q.rqPsn);
        out.printf("   timeout %d, retry_cnt %d, rnr_retry %d, max_rd_atomic %d, max_dest_rd_atomic %d%n",
                q.timeout, q.retryCnt, q.rnrRetry, q.maxRdAtomic, q.maxDestRdAtomic);
        out.printf("   qp_access_flags %s, %s%n", Access.toString(q.qpAccessFlags), q.cap);
    }

    /**
     * RESET -> INIT -> RTR -> RTS for both QPs through the guided path, each the other's destination,
     * as ibv_rc_pingpong does with the two halves on two hosts: {@link QueuePairBuilder#prepare}
     * moves a QP to INIT, the endpoints are what two hosts would exchange, and
     * {@link PreparedQueuePair#handshake} takes each to RTS. The masks printed are those the builder
     * uses: exactly what the IBTA state table requires.
     */
    private void connect(Tour t) {
        QueuePairBuilder builder = t.pd.queuePair(QpType.RC, t.cq).gidIndex(t.sgidIndex)
                .access(Access.REMOTE_WRITE | Access.REMOTE_READ).maxRdAtomic(1).maxDestRdAtomic(1);
        PreparedQueuePair a = builder.prepare(t.qpA);
        transition("A", t.qpA, QpState.RESET, QpState.INIT);
        PreparedQueuePair b = builder.prepare(t.qpB);
        transition("B", t.qpB, QpState.RESET, QpState.INIT);
        out.printf("   endpoint A: %s%n   endpoint B: %s   (what two hosts exchange)%n", a.endpoint(), b.endpoint());
        a.handshake(b.endpoint());
        transition("A", t.qpA, QpState.INIT, QpState.RTR);
        transition("A", t.qpA, QpState.RTR, QpState.RTS);
        b.handshake(a.endpoint());
        transition("B", t.qpB, QpState.INIT, QpState.RTR);
        transition("B", t.qpB, QpState.RTR, QpState.RTS);
    }

    private void transition(String who, QueuePair qp, QpState from, QpState to) {
        int mask = QpAttrMask.STATE | QpTransitions.required(qp.type(), from, to);
        out.printf("   %s 0x%06x  %-5s -> %-5s mask %s%n", who, qp.qpn(), from, to, QpAttrMask.toString(mask));
    }

    // ---------------------------------------------------------------------------------------------
    // The data path.

    /**
     * Moves bytes between A and B: an 8-byte SEND into a posted RECV and an 8-byte RDMA WRITE, each
     * checked; then traffic with figures ({@link DemoTraffic}): a ping-pong of RDMA WRITEs, SEND/RECV
     * round trips and a stream of 64 KiB RDMA WRITEs. A failed completion, wrong bytes or a data path
     * that stops moving ends the data path with a one-line reason; the tour still tears down.
     *
     * @return 0, or 1 if the data path failed
     */
    int moveData(Tour t) {
        DemoTraffic traffic = new DemoTraffic(t, out, B_HALF);
        try {
            step("Move data between A and B", "ibv_post_recv, ibv_post_send, ibv_poll_cq");
            sendRecv(t);
            rdmaWrite(t);

            step("Ping-pong: 8-byte RDMA WRITE round trips, B answering on a second thread",
                    "ibv_post_send with IBV_SEND_INLINE, selective signaling");
            traffic.pingPong(PING_PONG_WARMUP, PING_PONG_ITERATIONS, SECTION_BUDGET_NANOS);

            step("SEND/RECV round trips: 8 bytes there and back", "ibv_post_send, ibv_post_recv, ibv_poll_cq");
            traffic.sendRecvRoundTrips(SEND_RECV_WARMUP, SEND_RECV_ITERATIONS, SECTION_BUDGET_NANOS);

            step("Bandwidth: 64 KiB RDMA WRITEs from A to B, " + BANDWIDTH_DEPTH + " in flight",
                    "ibv_post_send, ibv_poll_cq");
            traffic.bandwidth(BANDWIDTH_BYTES, BANDWIDTH_DEPTH, BANDWIDTH_MESSAGES, BANDWIDTH_MAX_NANOS);
            return 0;
        } catch (DataPathFailure e) {
            out.printf("   data path: FAILED (%s)%n", e.getMessage());
            PrintWriter err = spec.commandLine().getErr();
            err.println("rdma4j: demo: the data path failed: " + e.getMessage());
            err.flush();
            return 1;
        }
    }

    private void sendRecv(Tour t) throws DataPathFailure {
        MemorySegment m = t.mr.segment();
        long sent = word("rdma4j!!");
        long srcOff = 0;
        long dstOff = B_HALF;
        m.set(BE_LONG, srcOff, sent);
        m.set(BE_LONG, dstOff, 0L);
        RecvWorkRequest recv = new RecvWorkRequest().wrId(1).sge(t.mr, dstOff, 8);
        SendWorkRequest send = new SendWorkRequest().wrId(2).flags(SendFlag.SIGNALED).sge(t.mr, srcOff, 8).send();
        guarded("post_recv on B", () -> t.qpB.postRecv(recv));
        guarded("post_send on A", () -> t.qpA.postSend(send));
        WorkCompletion[] wcs = await(t.cq, 2);
        long got = m.get(BE_LONG, dstOff);
        if (got != sent) {
            throw new DataPathFailure("SEND delivered \"" + text(got) + "\", not \"" + text(sent) + "\"");
        }
        out.printf("   SEND A -> B, 8 bytes: B received \"%s\"%n", text(got));
        for (WorkCompletion wc : wcs) {
            out.printf("      %s%n", wc);
        }
    }

    private void rdmaWrite(Tour t) throws DataPathFailure {
        MemorySegment m = t.mr.segment();
        long written = word("written!");
        long srcOff = 64;
        long dstOff = B_HALF + 64;
        m.set(BE_LONG, srcOff, written);
        m.set(BE_LONG, dstOff, 0L);
        long remoteAddr = t.mr.address() + dstOff;
        SendWorkRequest write = new SendWorkRequest().wrId(3).flags(SendFlag.SIGNALED).sge(t.mr, srcOff, 8)
                .write(remoteAddr, t.mr.rkey());
        guarded("post_send on A", () -> t.qpA.postSend(write));
        WorkCompletion[] wcs = await(t.cq, 1);
        long got = m.get(BE_LONG, dstOff);
        if (got != written) {
            throw new DataPathFailure("RDMA WRITE left \"" + text(got) + "\", not \"" + text(written) + "\"");
        }
        out.printf("   RDMA WRITE A -> B (addr 0x%x, rkey 0x%08x), 8 bytes: B's memory now holds \"%s\"%n",
                remoteAddr, t.mr.rkey(), text(got));
        out.printf("      %s%n", wcs[0]);
    }

    /** Polls until {@code n} completions arrived (all successful) or the time is up. */
    static WorkCompletion[] await(CompletionQueue cq, int n) throws DataPathFailure {
        WorkCompletion[] got = WorkCompletion.array(n);
        WorkCompletion[] slots = WorkCompletion.array(n);
        int count = 0;
        long start = System.nanoTime();
        long timeoutNs = TimeUnit.MILLISECONDS.toNanos(DATA_TIMEOUT_MS);
        while (count < n) {
            int k;
            try {
                k = cq.poll(slots, n - count, IdleStrategy.busySpin(), timeoutNs - (System.nanoTime() - start));
            } catch (RuntimeException e) {
                throw new DataPathFailure("poll_cq: " + describe(e));
            }
            if (k == 0) {
                if (Thread.interrupted()) {
                    Thread.currentThread().interrupt();
                    throw new DataPathFailure("interrupted");
                }
                throw new DataPathFailure("no work completion within " + DATA_TIMEOUT_MS / 1000 + " s; "
                        + count + " of " + n + " arrived");
            }
            for (int i = 0; i < k; i++) {
                if (!slots[i].isSuccess()) {
                    throw new DataPathFailure("work request " + slots[i].wrId() + " completed with "
                            + slots[i].status() + ": " + slots[i].status().description());
                }
                got[count++].copyFrom(slots[i]);
            }
        }
        return got;
    }

    private static void guarded(String what, Runnable post) throws DataPathFailure {
        try {
            post.run();
        } catch (RuntimeException e) {
            throw new DataPathFailure(what + ": " + describe(e));
        }
    }

    static String describe(RuntimeException e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    private static long word(String eightChars) {
        return MemorySegment.ofArray(eightChars.getBytes(StandardCharsets.US_ASCII)).get(BE_LONG, 0);
    }

    private static String text(long word) {
        byte[] b = new byte[8];
        MemorySegment.ofArray(b).set(BE_LONG, 0, word);
        StringBuilder sb = new StringBuilder(8);
        for (byte c : b) {
            sb.append(c >= 0x20 && c < 0x7f ? (char) c : '.');
        }
        return sb.toString();
    }

    /** The data path failed: a failed completion, wrong bytes, a post refused, or no progress. */
    static final class DataPathFailure extends Exception {
        private static final long serialVersionUID = 1L;

        DataPathFailure(String what) {
            super(what, null, false, false);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Tear-down.

    /** Children before parents, as libibverbs requires; a parent closed too early fails with EBUSY. */
    private void tearDown(Tour t) {
        step("Tear down, children before parents",
                "ibv_destroy_qp, ibv_destroy_cq, ibv_destroy_comp_channel, ibv_dereg_mr, ibv_dealloc_pd, "
                        + "ibv_close_device");
        try {
            t.pd.close();
            out.println("   dealloc PD while its MR and QPs live: accepted (unexpected!)");
        } catch (VerbsException e) {
            out.printf("   dealloc PD while its MR and QPs live: refused, %s%n", e.getMessage());
        }
        close(t.qpB, "destroy QP B");
        close(t.qpA, "destroy QP A");
        close(t.cq, "destroy CQ");
        close(t.channel, "destroy completion channel");
        close(t.mr, "deregister MR");
        close(t.pd, "deallocate PD");
        close(t.ctx, "close " + deviceName);
    }

    private void close(VerbsResource r, String what) {
        r.close();
        out.printf("   %s%n", what);
    }

    /** After a failed step: release what exists, quietly, keeping the first failure as the one reported. */
    private static void tearDownAfterFailure(Tour t, RuntimeException failure) {
        for (VerbsResource r : new VerbsResource[] {t.qpB, t.qpA, t.cq, t.channel, t.mr, t.pd, t.ctx}) {
            if (r != null) {
                try {
                    r.close();
                } catch (RuntimeException e) {
                    failure.addSuppressed(e);
                }
            }
        }
    }

    private void step(String title, String verbs) {
        out.flush(); // show the previous step before this one starts (the data path may take a while)
        out.printf("%n%d. %s  (%s)%n", ++step, title, verbs);
    }
}
