// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcOpcode;

/**
 * Runs the four ping-pongs of the seed's table between a client and a server, each on a thread of
 * its own, one QP on each of two devices (or both on one), and measures the round trip and each
 * side's CPU share over the timed iterations. Not thread-safe; one run at a time.
 */
final class PingpongStudy {
    /** How long a whole variant may take (warm-up and timed iterations) before it is given up. */
    static final long VARIANT_LIMIT_NS = 600_000_000_000L;

    record Settings(int ibPort, int gidIndex, int size, int iters, int warmup) {}

    /** The figures of one variant. */
    record Result(Variant variant, double meanRttUs, double medianRttUs, double p99RttUs,
            CpuSnapshot.Share client, CpuSnapshot.Share server, CpuSnapshot.Share devices, double otherPercent,
            java.util.Map<String, Long> deviceThreadNs, double clientWaitsPerIter, double serverWaitsPerIter,
            double clientRunQueuePercent, double serverRunQueuePercent) {}

    private final Settings s;
    private final Device clientDevice;
    private final Device serverDevice;

    PingpongStudy(Settings settings, Device clientDevice, Device serverDevice) {
        this.s = settings;
        this.clientDevice = clientDevice;
        this.serverDevice = serverDevice;
    }

    List<Result> runAll(List<Variant> variants) {
        List<Result> results = new ArrayList<>();
        for (Variant v : variants) {
            results.add(run(v));
        }
        return results;
    }

    /** One variant on fresh resources, released again before it returns. */
    Result run(Variant v) {
        try (Endpoint client = new Endpoint(clientDevice, s.ibPort(), s.gidIndex(), s.size());
                Endpoint server = new Endpoint(serverDevice, s.ibPort(), s.gidIndex(), s.size())) {
            // The server posts its first receive before the connection is accepted, as the seed's agent does.
            RecvWorkRequest serverRecv = new RecvWorkRequest().wrId(1).sge(server.pingAddress(), s.size(),
                    server.mr.lkey());
            server.qp.postRecv(serverRecv);
            server.prepared.handshake(client.prepared.endpoint());
            client.prepared.handshake(server.prepared.endpoint());

            AtomicReference<Throwable> failure = new AtomicReference<>();
            // the server thread lives until the client has taken its last CPU snapshot (a finished
            // thread has no CPU time to read)
            CountDownLatch measured = new CountDownLatch(1);
            // both threads say their kernel thread id (for the run-queue figures) before they begin
            CountDownLatch started = new CountDownLatch(2);
            Result[] result = new Result[1];
            Thread serverThread = Thread.ofPlatform().name("study-server").unstarted(() -> {
                try {
                    server.tid = RunQueue.currentTid();
                    rendezvous(started);
                    if (v.sendRecv()) {
                        serveSendRecv(server, serverRecv, v.events);
                    } else {
                        serveFinished(server, failure);
                    }
                    if (!measured.await(VARIANT_LIMIT_NS, TimeUnit.NANOSECONDS)) {
                        throw new StudyFailure("server: the client never finished measuring");
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            });
            Thread clientThread = Thread.ofPlatform().name("study-client").unstarted(() -> {
                try {
                    client.tid = RunQueue.currentTid();
                    rendezvous(started);
                    result[0] = v.sendRecv() ? pingSendRecv(v, client, server, serverThread)
                            : pingWriteRead(v, client, server, serverThread);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    measured.countDown();
                }
            });
            serverThread.start();
            clientThread.start();
            join(clientThread, serverThread, failure, v);
            Throwable t = failure.get();
            if (t instanceof RuntimeException re) {
                throw re;
            }
            if (t instanceof Error e) {
                throw e;
            }
            return result[0];
        }
    }

    private static void rendezvous(CountDownLatch started) throws InterruptedException {
        started.countDown();
        if (!started.await(30, TimeUnit.SECONDS)) {
            throw new StudyFailure("the other side's thread did not start within 30 s");
        }
    }

    private static void join(Thread client, Thread server, AtomicReference<Throwable> failure, Variant v) {
        long deadline = System.nanoTime() + VARIANT_LIMIT_NS;
        try {
            for (Thread t : new Thread[] {client, server}) {
                while (t.isAlive()) {
                    t.join(200);
                    if (failure.get() != null) {
                        // the other side may wait for a peer that is gone: its bounded wait ends it, but
                        // an interrupt ends it now
                        client.interrupt();
                        server.interrupt();
                    }
                    if (System.nanoTime() - deadline > 0) {
                        client.interrupt();
                        server.interrupt();
                        failure.compareAndSet(null, new StudyFailure(v.id + ": did not finish within "
                                + VARIANT_LIMIT_NS / 1_000_000_000L + " s"));
                    }
                }
            }
        } catch (InterruptedException e) {
            client.interrupt();
            server.interrupt();
            Thread.currentThread().interrupt();
            throw new StudyFailure("interrupted");
        }
    }

    // ---------------------------------------------------------------------------------------------
    // SEND/RECV (variants 1 and 2)

    /** The seed's agent: receive a ping, post the next receive, send the pong back, wait for the send. */
    private void serveSendRecv(Endpoint server, RecvWorkRequest recv, boolean events) {
        SendWorkRequest pong = new SendWorkRequest().wrId(2).send()
                .flags(SendFlag.SIGNALED | server.inlineFlag).sge(server.pingAddress(), s.size(), server.mr.lkey());
        int total = s.warmup() + s.iters();
        for (int i = 0; i < total; i++) {
            server.awaitRecv(events, "server: ping " + i);
            server.qp.postRecv(recv);
            server.qp.postSend(pong);
            server.awaitSend(events, "server: pong " + i);
        }
    }

    /** The seed's client: post a receive for the pong, send the ping, wait for both, check the pong. */
    private Result pingSendRecv(Variant v, Endpoint client, Endpoint peerEndpoint, Thread serverThread) {
        SendWorkRequest ping = new SendWorkRequest().wrId(2).send()
                .flags(SendFlag.SIGNALED | client.inlineFlag).sge(client.pingAddress(), s.size(), client.mr.lkey());
        RecvWorkRequest recv = new RecvWorkRequest().wrId(1).sge(client.pongAddress(), s.size(), client.mr.lkey());
        MemorySegment pingBuf = client.buf.asSlice(0, s.size());
        MemorySegment pongBuf = client.buf.asSlice(s.size(), s.size());
        long[] stamps = new long[s.iters() + 1];
        long[] waits0 = new long[2];
        long[] runq0 = new long[2];
        CpuSnapshot start = null;
        long self = Thread.currentThread().threadId();
        long peer = serverThread.threadId();
        int total = s.warmup() + s.iters();
        for (int i = 0; i < total; i++) {
            int timed = i - s.warmup();
            if (timed == 0) {
                start = CpuSnapshot.take(self, peer);
                waits0[0] = client.eventWaits;
                waits0[1] = peerEndpoint.eventWaits;
                runq0[0] = RunQueue.waitNs(client.tid);
                runq0[1] = RunQueue.waitNs(peerEndpoint.tid);
                stamps[0] = System.nanoTime();
            }
            client.qp.postRecv(recv);
            stamp(pingBuf, i);
            client.qp.postSend(ping);
            client.awaitSend(v.events, "client: ping " + i);
            client.awaitRecv(v.events, "client: pong " + i);
            verify(pongBuf, i, "pong " + i);
            if (timed >= 0) {
                stamps[timed + 1] = System.nanoTime();
            }
        }
        CpuSnapshot end = CpuSnapshot.take(self, peer);
        double clientWaits = (client.eventWaits - waits0[0]) / (double) s.iters();
        double serverWaits = (peerEndpoint.eventWaits - waits0[1]) / (double) s.iters();
        double clientRunq = runQueuePercent(runq0[0], RunQueue.waitNs(client.tid), end.wallNs() - start.wallNs());
        double serverRunq = runQueuePercent(runq0[1], RunQueue.waitNs(peerEndpoint.tid), end.wallNs() - start.wallNs());
        return result(v, stamps, end.usedSince(start, self, peer), clientWaits, serverWaits, clientRunq, serverRunq);
    }

    // ---------------------------------------------------------------------------------------------
    // RDMA WRITE + READ (variants 3 and 4)

    /** The seed's passive agent: it only waits, with events, for the client's "finished" message. */
    private void serveFinished(Endpoint server, AtomicReference<Throwable> failure) {
        server.awaitRecvWhile(() -> failure.get() == null, VARIANT_LIMIT_NS, "server: the finished message");
        int expected = s.warmup() + s.iters();
        verify(server.buf.asSlice(0, s.size()), expected, "server: the finished message (the number of transfers)");
    }

    /**
     * The seed's active client: WRITE the ping into the server's buffer (signaled and waited for in
     * variant 3, unsignaled in variant 4), READ it back into the pong buffer and wait for that, check
     * it; after the loop SEND the number of transfers so the server knows it is over.
     */
    private Result pingWriteRead(Variant v, Endpoint client, Endpoint peerEndpoint, Thread serverThread) {
        boolean signaledWrite = v == Variant.WRITE_READ_EVENTS;
        long remote = peerEndpoint.pingAddress();
        int rkey = peerEndpoint.mr.rkey();
        SendWorkRequest write = new SendWorkRequest().wrId(3).write(remote, rkey)
                .flags((signaledWrite ? SendFlag.SIGNALED : 0) | client.inlineFlag)
                .sge(client.pingAddress(), s.size(), client.mr.lkey());
        SendWorkRequest read = new SendWorkRequest().wrId(4).read(remote, rkey).flags(SendFlag.SIGNALED)
                .sge(client.pongAddress(), s.size(), client.mr.lkey());
        MemorySegment pingBuf = client.buf.asSlice(0, s.size());
        MemorySegment pongBuf = client.buf.asSlice(s.size(), s.size());
        long[] stamps = new long[s.iters() + 1];
        long[] waits0 = new long[2];
        long[] runq0 = new long[2];
        CpuSnapshot start = null;
        long self = Thread.currentThread().threadId();
        long peer = serverThread.threadId();
        int total = s.warmup() + s.iters();
        for (int i = 0; i < total; i++) {
            int timed = i - s.warmup();
            if (timed == 0) {
                start = CpuSnapshot.take(self, peer);
                waits0[0] = client.eventWaits;
                waits0[1] = peerEndpoint.eventWaits;
                runq0[0] = RunQueue.waitNs(client.tid);
                runq0[1] = RunQueue.waitNs(peerEndpoint.tid);
                stamps[0] = System.nanoTime();
            }
            stamp(pingBuf, i);
            client.qp.postSend(write);
            if (signaledWrite) {
                expect(client.awaitSend(true, "client: WRITE " + i), WcOpcode.RDMA_WRITE, "WRITE " + i);
            }
            client.qp.postSend(read);
            expect(client.awaitSend(true, "client: READ " + i), WcOpcode.RDMA_READ, "READ " + i);
            verify(pongBuf, i, "READ " + i);
            if (timed >= 0) {
                stamps[timed + 1] = System.nanoTime();
            }
        }
        CpuSnapshot end = CpuSnapshot.take(self, peer);
        double clientWaits = (client.eventWaits - waits0[0]) / (double) s.iters();
        double serverWaits = (peerEndpoint.eventWaits - waits0[1]) / (double) s.iters();
        double clientRunq = runQueuePercent(runq0[0], RunQueue.waitNs(client.tid), end.wallNs() - start.wallNs());
        double serverRunq = runQueuePercent(runq0[1], RunQueue.waitNs(peerEndpoint.tid), end.wallNs() - start.wallNs());
        // "finished": the number of transfers, so the agent knows the loop is over
        stamp(pingBuf, total);
        SendWorkRequest finished = new SendWorkRequest().wrId(5).send().flags(SendFlag.SIGNALED)
                .sge(client.pingAddress(), s.size(), client.mr.lkey());
        client.qp.postSend(finished);
        client.awaitSend(true, "client: the finished message");
        return result(v, stamps, end.usedSince(start, self, peer), clientWaits, serverWaits, clientRunq, serverRunq);
    }

    private static void expect(org.rdma4j.verbs.WorkCompletion w, WcOpcode op, String what) {
        if (w.opcode() != op) {
            throw new StudyFailure(what + ": a completion for " + w.opcode() + " (wr_id " + w.wrId() + ")");
        }
    }

    // ---------------------------------------------------------------------------------------------

    /** Marks the ping with the iteration number (the first 8 bytes, or the first byte of a short one). */
    private static void stamp(MemorySegment ping, int i) {
        if (ping.byteSize() >= 8) {
            ping.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, i);
        } else {
            ping.set(ValueLayout.JAVA_BYTE, 0, (byte) i);
        }
    }

    private static void verify(MemorySegment pong, int i, String what) {
        boolean ok = pong.byteSize() >= 8 ? pong.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) == i
                : pong.get(ValueLayout.JAVA_BYTE, 0) == (byte) i;
        if (!ok) {
            throw new StudyFailure(what + ": the pong does not hold the ping's data");
        }
    }

    private static double runQueuePercent(long before, long after, long wallNs) {
        return before < 0 || after < 0 || wallNs <= 0 ? Double.NaN : 100.0 * (after - before) / wallNs;
    }

    private Result result(Variant v, long[] stamps, CpuSnapshot.Usage u, double clientWaits, double serverWaits,
            double clientRunq, double serverRunq) {
        int n = stamps.length - 1;
        double[] rtt = new double[n];
        for (int i = 0; i < n; i++) {
            rtt[i] = (stamps[i + 1] - stamps[i]) / 1000.0;
        }
        Arrays.sort(rtt);
        double mean = (stamps[n] - stamps[0]) / 1000.0 / n;
        return new Result(v, mean, rtt[(n - 1) / 2], rtt[Math.min(n - 1, (int) Math.ceil(0.99 * n) - 1)],
                u.named()[0], u.named()[1], u.devices(), u.otherPercent(), u.perDeviceThreadNs(), clientWaits,
                serverWaits, clientRunq, serverRunq);
    }
}
