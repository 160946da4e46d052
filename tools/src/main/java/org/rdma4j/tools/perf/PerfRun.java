// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import org.rdma4j.tools.device.PortCounters;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.LinkLayer;

/**
 * One side of a perftest test, step for step in the order the C programs go (so the TCP exchange
 * matches theirs message for message): connect, versions, cycle buffer and MTU, resources, the banner,
 * the key hand shakes before and after connecting the QPs, the measured runs with the barrier before
 * each, the results, and the closing hand shake. Results are kept for --json and --plot. One thread.
 */
final class PerfRun {
    /** Opens the TCP channel (connects, or accepts one client). */
    interface CommOpener {
        Comm open() throws PerfFailure;
    }

    private final PerfParams p;
    private final PrintWriter out;
    private final PrintWriter err;
    final List<LatencyStats> latResults = new ArrayList<>();
    final List<double[]> latDurationResults = new ArrayList<>();
    final List<BwReport> bwResults = new ArrayList<>();
    String deviceName;
    String linkLayerName;
    /** Does nothing: {@link #beforeOutput} without a progress bar. */
    static final Runnable NOTHING = () -> { };
    /** Run before a result or an error is printed: the progress bar erases itself there. */
    volatile Runnable beforeOutput = NOTHING;
    /** The loops of the run, for the progress bar (set once resources exist). */
    volatile Loops loops;
    /** Bytes this thread allocated inside the measured loops (all sizes), for the allocation check. */
    long loopAllocatedBytes;
    /** Operations those loops ran (messages posted or received). */
    long loopOps;

    /** Set for tests: the resources after the run (null after close). */
    PerfResources resources;
    private boolean keepResources;

    /** The result lines (--output, --cpu_util, --report-both); {@link #out} is its quiet writer. */
    private final ResultLines results;
    /** --cpu_util in a -D run: the CPU use of each sample window. */
    private CpuUtil cpu;

    PerfRun(PerfParams p, PrintWriter out, PrintWriter err) {
        this.p = p;
        this.results = new ResultLines(p, out);
        this.out = results.quiet; // --output: nothing but the numbers
        this.err = err;
    }

    /** Keeps the resources open after the run (tests read the buffers); the caller closes them. */
    PerfRun keepResources() {
        keepResources = true;
        return this;
    }

    /** Runs on {@code device}; returns the exit code (0, or 1 after printing why on stderr). */
    int run(Device device, CommOpener opener) {
        PerfResources res = new PerfResources(p, out, err);
        resources = res;
        Comm comm = null;
        try {
            if (!p.rdmaCm) {
                res.open(device);
                deviceName = device.name();
                linkLayerName = res.linkLayer == LinkLayer.ETHERNET ? "Ethernet" : "IB";
            }
            if (p.server) {
                out.print("\n************************************\n* Waiting for client to connect... *\n"
                        + "************************************\n");
                out.flush();
            }
            comm = opener.open();
            if (p.rdmaCm) {
                // -R: the QPs go on the device the connection manager picked for the address (cm_id->verbs)
                CmLink link = comm.cmLink();
                res.open(link.context(), link.portNum());
                deviceName = link.context().device().name();
                linkLayerName = res.linkLayer == LinkLayer.ETHERNET ? "Ethernet" : "IB";
            }
            steps(res, comm);
            if (res.cm != null) {
                res.cm.disconnect(Math.min(p.exchangeTimeoutS * 1000, 5000));
            }
            out.flush();
            return 0;
        } catch (PerfFailure f) {
            beforeOutput.run();
            out.flush();
            for (String line : f.lines()) {
                err.println(line);
            }
            err.flush();
            return 1;
        } finally {
            if (p.printCounters) {
                printCounters(res.ctx);
            }
            if (!keepResources) {
                res.close();
                resources = null;
            }
            if (comm != null) {
                if (keepResources && p.rdmaCm) {
                    res.closeAfter = comm; // its id holds the connection manager's context the resources use
                } else {
                    comm.close();
                }
            }
        }
    }

    /** --counters: the port's non-zero counters, one line on stderr (after a failure too). */
    private void printCounters(Context ctx) {
        if (ctx == null) {
            return;
        }
        err.println(PortCounters.line(ctx, p.ibPort));
        err.flush();
    }

    private void steps(PerfResources res, Comm comm) throws PerfFailure {
        String remoteVersion = comm.exchangeVersions();
        Comm.checkVersion(remoteVersion);
        if (Comm.atof(remoteVersion) >= 5.32) {
            int[] sys = comm.exchangeSysData(p.cycleBuffer, p.cacheLine);
            p.cycleBuffer = Math.max(p.cycleBuffer, sys[0]);
            p.cacheLine = Math.max(p.cacheLine, sys[1]);
        }
        int cur = res.localMtu(out);
        int rem = comm.exchangeMtu(cur);
        p.currMtu = rem >= 1 && rem <= 5 && cur > rem ? rem : cur;
        if (p.connection == Connection.UD && p.size > PerfParams.mtuBytes(p.currMtu)) {
            if (p.all || !p.sizeGiven) {
                err.printf(" Max msg size in UD is MTU %d%n Changing to this MTU%n", PerfParams.mtuBytes(p.currMtu));
                p.size = PerfParams.mtuBytes(p.currMtu);
            } else {
                throw new PerfFailure(" Max message size in UD cannot be greater than MTU ",
                        " Couldn't get context for the device");
            }
        }
        res.create();
        if (p.rdmaCm) {
            cmConnect(res, comm);
        }
        PerfDest[] mine = res.setUpConnection();
        out.print(Banner.testInfo(p, deviceName, linkLayerName));
        out.flush();
        boolean g = res.withGid();
        int q = p.numQps;
        PerfDest[] remote = new PerfDest[q];
        Verb verb = p.verb();
        if (!p.isBw() && verb != Verb.SEND) {
            comm.handShake(mine[0], g);
        }
        for (int i = 0; i < q; i++) {
            remote[i] = comm.handShake(mine[i], g);
        }
        if (!p.rdmaCm) {
            if (mine[0].gid().isIpv4Mapped() != remote[0].gid().isIpv4Mapped()) {
                throw new PerfFailure("", " Found Incompatibility issue with GID types.",
                        " Please Try to use a different IP version.", "");
            }
            res.connect(remote); // with -R the connection manager moved the QPs to RTR and RTS
        }
        if (verb == Verb.SEND) {
            comm.handShake(mine[0], g);
        }
        // perftest prints the address lines with its exchange's verb: SEND for the rdma_cm exchange
        // (so no RKey, VAddr or OUT with -R)
        Verb printed = p.rdmaCm ? Verb.SEND : verb;
        for (int i = 0; i < q; i++) {
            out.print(Banner.address("local", mine[i], printed, g));
        }
        for (int i = 0; i < q; i++) {
            remote[i] = comm.handShake(mine[i], g);
            out.print(Banner.address("remote", remote[i], printed, g));
        }
        if (verb != Verb.SEND) {
            comm.handShake(mine[0], g);
        }
        out.flush();
        Loops l = new Loops(p, res);
        loops = l;
        if (p.cpuUtil && !p.isDuration()) {
            out.print(Tables.RESULT_LINE);
            err.print(" CPU Utilization works only with Duration mode.\n"); // perftest warns and goes on
            err.flush();
        }
        cpu = p.cpuUtil && p.isDuration() ? CpuUtil.start(this) : null;
        if (p.useEvent) {
            res.sendCq.reqNotify(false);
            if (res.recvCq != res.sendCq) {
                res.recvCq.reqNotify(false);
            }
        }
        // the barrier after a run waits as long as the peer's run may take
        // (--run_infinitely: as long as the peer runs; a peer that ends closes the connection)
        int runWaitMs = p.runInfinitely ? Integer.MAX_VALUE : (int) Math.min(Integer.MAX_VALUE,
                1000L * (p.exchangeTimeoutS + (p.isDuration() ? p.duration : 0)) + (p.all ? 600_000L : 0));
        try {
            measure(res, comm, l, mine, remote, g, runWaitMs);
        } finally {
            if (cpu != null) {
                cpu.close();
            }
        }
    }

    private void measure(PerfResources res, Comm comm, Loops l, PerfDest[] mine, PerfDest[] remote, boolean g,
                         int runWaitMs) throws PerfFailure {
        Verb verb = p.verb();
        if (!p.isBw()) {
            latency(res, comm, l, mine[0], remote, g, runWaitMs);
        } else if (verb == Verb.SEND) {
            sendBw(comm, l, mine[0], remote, g, runWaitMs);
        } else {
            rdmaBw(comm, l, mine[0], remote, g, runWaitMs);
        }
    }

    /**
     * create_rdma_cm_connection: a hand shake, the test QPs connected by the connection manager (the
     * server listening before that hand shake already, see {@link #cmListener}), another hand shake.
     * The key messages carry nothing yet (perftest sends its still empty dests).
     */
    private void cmConnect(PerfResources res, Comm comm) throws PerfFailure {
        PerfDest empty = new PerfDest(0, 0, 0, 0, 0, 0, org.rdma4j.verbs.Gid.ZERO, 0);
        int timeoutMs = p.exchangeTimeoutS * 1000;
        CmLink link = comm.cmLink();
        if (p.server) {
            res.cm = CmQps.listen(p, new java.net.InetSocketAddress(cmListenAddress(p), p.port));
            comm.handShake(empty, true);
            res.cm.accept(res, timeoutMs);
        } else {
            res.cm = CmQps.client(p);
            comm.handShake(empty, true);
            java.net.InetSocketAddress src = new java.net.InetSocketAddress(link.localAddress().getAddress(), 0);
            res.cm.connect(res, src, new java.net.InetSocketAddress(cmHost(p), p.port), timeoutMs);
        }
        comm.handShake(empty, true);
    }

    /** Where a -R server listens: the --bind address, else any IPv4 address (perftest's AF_INET passive address). */
    static java.net.InetAddress cmListenAddress(PerfParams p) {
        if (p.cmAddress != null) {
            return p.cmAddress;
        }
        try {
            return java.net.InetAddress.getByAddress(new byte[4]);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The -R client's server address. */
    static java.net.InetAddress cmHost(PerfParams p) throws PerfFailure {
        try {
            return java.net.InetAddress.getByName(p.host);
        } catch (java.net.UnknownHostException e) {
            throw PerfFailure.of("Problem in resolving basic address and port", e);
        }
    }

    private long[] sizes(int maxPow) {
        if (!p.all) {
            return new long[] {p.size};
        }
        long[] s = new long[maxPow - 1];
        for (int i = 1; i < maxPow; i++) {
            s[i - 1] = 1L << i;
        }
        return s;
    }

    private void latHeader() {
        results.latHeader();
    }

    private void latency(PerfResources res, Comm comm, Loops l, PerfDest me, PerfDest[] remote, boolean g,
                         int runWaitMs) throws PerfFailure {
        Verb verb = p.verb();
        if (verb == Verb.READ || verb == Verb.ATOMIC) {
            if (p.server) {
                // only the client posts: the server waits for it to finish
                comm.timeoutMs(runWaitMs);
                comm.closeConnection(me, g);
                out.print(Tables.RESULT_LINE);
                return;
            }
        }
        latHeader();
        l.setSendWqes(remote);
        int maxPow = verb == Verb.SEND && p.connection == Connection.UD
                ? Long.numberOfTrailingZeros(PerfParams.mtuBytes(p.currMtu)) + 1 : 24;
        for (long size : sizes(maxPow)) {
            p.size = size;
            if (verb == Verb.SEND) {
                l.setRecvWqes();
                comm.timeoutMs(runWaitMs);
                comm.handShake(me, g);
                long a0 = Allocation.ofThisThread();
                LatencyLoops.send(l);
                countLoop(a0, p.iters);
            } else if (verb == Verb.WRITE) {
                long a0 = Allocation.ofThisThread();
                LatencyLoops.write(l);
                countLoop(a0, p.iters);
            } else {
                long a0 = Allocation.ofThisThread();
                LatencyLoops.readAtomic(l);
                countLoop(a0, p.iters);
            }
            reportLat(l);
        }
        beforeOutput.run();
        out.print(Tables.RESULT_LINE);
        if (!latResults.isEmpty()) {
            out.print(Tables.latSamplesNote(latResults.getFirst()));
        }
        if (verb != Verb.WRITE) {
            comm.timeoutMs(runWaitMs);
            comm.closeConnection(me, g);
        }
    }

    private void countLoop(long allocatedBefore, long ops) {
        long a1 = Allocation.ofThisThread();
        if (allocatedBefore >= 0 && a1 >= 0) {
            loopAllocatedBytes += a1 - allocatedBefore;
            loopOps += ops;
        }
    }

    private void reportLat(Loops l) {
        int rtt = p.verb().rttFactor();
        if (p.isDuration()) {
            long ticks = l.clock.sampleEnd - l.clock.sampleStart;
            double[] d = LatencyStats.duration(l.durationIters, ticks, rtt);
            beforeOutput.run();
            latDurationResults.add(new double[] {p.size, l.durationIters, d[0], d[1]});
            results.latDuration(p.size, l.durationIters, d[0], d[1], cpuPercent());
            out.flush();
            return;
        }
        LatencyStats s = LatencyStats.of(p.size, p.iters, l.tposted, rtt);
        latResults.add(s);
        beforeOutput.run();
        if (p.unsorted) {
            out.print("#, usec\n");
            for (int i = 0; i < s.unsortedUs.length; i++) {
                out.print((i + 1) + ", " + Tables.g(s.unsortedUs[i]) + "\n");
            }
        }
        if (p.histogram) {
            out.print("#, usec\n");
            for (int i = 0; i < s.sortedUs.length; i++) {
                out.print((i + 1) + ", " + Tables.g(s.sortedUs[i]) + "\n");
            }
        }
        if (p.unsorted || p.histogram) {
            latHeader();
        }
        results.lat(s);
        out.flush();
    }

    /** --cpu_util: the last sample window's CPU use (NaN without it). */
    private double cpuPercent() {
        return cpu == null ? Double.NaN : cpu.takePercent();
    }

    private void bwHeader() {
        results.bwHeader();
    }

    private BwReport bwReport(Loops l, boolean noPeak) {
        long n = p.isDuration() ? l.durationIters : (long) p.iters * p.numQps;
        return BwStats.report(p.size, l.tposted, l.tcompleted, n, p.cqMod, p.postList, noPeak || p.isDuration(), p.gbits);
    }

    private void rdmaBw(Comm comm, Loops l, PerfDest me, PerfDest[] remote, boolean g, int runWaitMs)
            throws PerfFailure {
        bwHeader();
        if (p.server && !p.duplex) {
            comm.timeoutMs(runWaitMs);
            comm.handShake(me, g);
            BwReport theirs = comm.exchangeBwReport(new BwReport(0, 0, 0, 0, 0));
            bwResults.add(theirs);
            beforeOutput.run();
            results.bw(theirs, Double.NaN);
            comm.closeConnection(me, g);
            out.print(Tables.RESULT_LINE);
            return;
        }
        BwReport last = new BwReport(0, 0, 0, 0, 0);
        long[] sizes = sizes(24);
        // --run_infinitely: -D rounds of one size, one line each, the queue going on as the last round left it
        long rounds = p.runInfinitely ? p.infiniteRounds : sizes.length;
        for (long k = 0; k < rounds; k++) {
            p.size = sizes[p.runInfinitely ? 0 : (int) k];
            if (k == 0 || !p.runInfinitely) {
                l.setSendWqes(remote);
            } else {
                RoundDrain.sends(l);
            }
            if (p.duplex) {
                comm.timeoutMs(runWaitMs);
                comm.handShake(me, g);
            }
            long a0 = Allocation.ofThisThread();
            l.bw();
            countLoop(a0, (long) p.iters * p.numQps);
            if (p.duplex) {
                comm.timeoutMs(runWaitMs); // a new step: the run is not part of the exchange's time
                comm.handShake(me, g);
            }
            last = bwReport(l, p.noPeak);
            if (p.duplex) {
                BwReport theirs = comm.exchangeBwReport(last);
                BwReport sum = last.plus(theirs);
                bwResults.add(sum);
                beforeOutput.run();
                results.bw(sum, cpuPercent());
                results.both(last, theirs, cpuPercent());
            } else {
                bwResults.add(last);
                beforeOutput.run();
                results.bw(last, cpuPercent());
            }
            out.flush();
        }
        out.print(Tables.RESULT_LINE);
        comm.timeoutMs(runWaitMs);
        if (!p.duplex) {
            comm.handShake(me, g);
            comm.exchangeBwReport(last);
        }
        comm.closeConnection(me, g);
    }

    /** send_bw -b's loop, made on the first -b run. */
    private BiSendLoop bi;

    private void sendBw(Comm comm, Loops l, PerfDest me, PerfDest[] remote, boolean g, int runWaitMs)
            throws PerfFailure {
        bwHeader();
        int maxPow = p.connection == Connection.UD ? Long.numberOfTrailingZeros(PerfParams.mtuBytes(p.currMtu)) + 1
                : 24;
        if (p.runInfinitely) {
            p.size = sizes(maxPow)[0];
            sendBwInfinitely(comm, l, me, remote, g, runWaitMs);
            return;
        }
        for (long size : sizes(maxPow)) {
            p.size = size;
            if (p.isClient() || p.duplex) {
                l.setSendWqes(remote);
            }
            if (!p.isClient() || p.duplex) {
                l.setRecvWqes();
            }
            comm.timeoutMs(runWaitMs);
            comm.handShake(me, g);
            BwReport rep;
            if (p.duplex) {
                long a0 = Allocation.ofThisThread();
                bi = bi != null ? bi : new BiSendLoop(l);
                bi.run();
                countLoop(a0, 2L * p.iters * p.numQps);
                comm.timeoutMs(runWaitMs); // a new step: the run is not part of the exchange's time
                BwReport mine = bwReport(l, p.noPeak);
                // perftest: a -D run prints what this side received, without exchanging reports
                BwReport theirs = p.isDuration() ? null : comm.exchangeBwReport(mine);
                rep = theirs == null ? mine : mine.plus(theirs);
                bwResults.add(rep);
                beforeOutput.run();
                results.bw(rep, cpuPercent());
                if (theirs != null) {
                    results.both(mine, theirs, cpuPercent());
                }
                out.flush();
                if (p.all) {
                    comm.handShake(me, g);
                }
                continue;
            }
            if (p.isClient()) {
                long a0 = Allocation.ofThisThread();
                l.bw();
                countLoop(a0, (long) p.iters * p.numQps);
                rep = bwReport(l, p.noPeak);
            } else {
                long a0 = Allocation.ofThisThread();
                long got = l.bwServer(err);
                countLoop(a0, got);
                long n = p.isDuration() ? l.durationIters : got;
                rep = BwStats.report(p.size, l.tposted, l.tcompleted, n, p.cqMod, p.postList, true, p.gbits);
            }
            bwResults.add(rep);
            beforeOutput.run();
            results.bw(rep, cpuPercent());
            out.flush();
            if (p.all) {
                comm.timeoutMs(runWaitMs); // a new step: the run is not part of the exchange's time
                comm.handShake(me, g);
            }
        }
        out.print(Tables.RESULT_LINE);
        comm.timeoutMs(runWaitMs);
        comm.closeConnection(me, g);
    }

    /**
     * send_bw --run_infinitely (not -b): the sender runs -D rounds of one size, one line each, the
     * queue going on as the last round left it ({@link RoundDrain}); the receiver posts its receives
     * once and reposts each as it completes until the sender closes ({@link InfiniteRecv}), printing
     * no rounds, as perftest's server.
     */
    private void sendBwInfinitely(Comm comm, Loops l, PerfDest me, PerfDest[] remote, boolean g, int runWaitMs)
            throws PerfFailure {
        if (p.isClient()) {
            l.setSendWqes(remote);
        } else {
            l.setRecvWqes();
        }
        comm.timeoutMs(runWaitMs);
        comm.handShake(me, g);
        if (!p.isClient()) {
            InfiniteRecv rx = new InfiniteRecv(l);
            long a0 = Allocation.ofThisThread();
            countLoop(a0, rx.run(comm));
        }
        for (long k = 0; p.isClient() && k < p.infiniteRounds; k++) {
            if (k > 0) {
                RoundDrain.sends(l);
            }
            long a0 = Allocation.ofThisThread();
            l.bw();
            countLoop(a0, l.durationIters);
            BwReport rep = bwReport(l, p.noPeak);
            bwResults.add(rep);
            beforeOutput.run();
            results.bw(rep, cpuPercent());
            out.flush();
        }
        out.print(Tables.RESULT_LINE);
        comm.timeoutMs(runWaitMs);
        comm.closeConnection(me, g);
    }
}
