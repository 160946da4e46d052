// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rdma4j.conformance.AbstractVerbsTest;
import org.rdma4j.conformance.QpBringUp;
import org.rdma4j.soft.link.shm.ShmLink;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * Two JVMs on one host, a soft device in each with the shared-memory link only (policy SHM, so a packet
 * that did not go through a ring is lost, not quietly sent as a datagram): RDMA WRITEs and SENDs both
 * ways land byte for byte (the child without ICRCs on its ring, the parent with); then the child is killed and the survivor's next WRITE ends in RETRY_EXC_ERR
 * instead of hanging, and a new device takes over the dead one's address (its stale ring file).
 */
class ShmTwoProcessTest {
    static final int WRITE_BYTES = 40_000; // 10 packets at MTU 4096
    static final int RECV_AT = 60_000;
    static final int MR_BYTES = 64 * 1024;
    static final long WAIT_NS = 30_000_000_000L;

    /** One side: a device with its RC QP and one registered buffer. */
    static final class Side implements AutoCloseable {
        final Device dev;
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final Arena arena = Arena.ofShared();
        final MemoryRegion mr;
        private final WorkCompletion[] wcs = WorkCompletion.array(4);

        Side(String name, InetAddress addr, int port) {
            dev = SoftDevices.createUdp(name, addr, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, null);
            ctx = dev.open();
            pd = ctx.allocPd();
            cq = ctx.createCq(64);
            qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq));
            mr = pd.regMr(arena.allocate(MR_BYTES, 4096), AbstractVerbsTest.MR_ALL);
        }

        String describe() {
            return "QP " + qp.qpn() + " " + mr.rkey() + " " + mr.address();
        }

        void connect(InetAddress peer, int peerQpn, int timeout, int retryCnt) {
            QpBringUp.toInit(qp, AbstractVerbsTest.QP_ALL, 0);
            QpBringUp.toRtr(qp, Mtu.MTU_4096, Gid.of(peer), 1, peerQpn, 0, 1, 12);
            QpBringUp.toRts(qp, 0, timeout, retryCnt, 7, 1);
        }

        void postRecv() {
            qp.postRecv(new RecvWorkRequest().wrId(9).sge(mr, RECV_AT, 64));
        }

        void write(long wrId, long remoteAddr, int rkey) {
            qp.postSend(new SendWorkRequest().wrId(wrId).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                    .sge(mr, 0, WRITE_BYTES).rdma(remoteAddr, rkey));
        }

        void send(long wrId, int seed) {
            mr.segment().set(ValueLayout.JAVA_INT_UNALIGNED, RECV_AT + 1000, seed);
            qp.postSend(new SendWorkRequest().wrId(wrId).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                    .sge(mr, RECV_AT + 1000, 4));
        }

        /** The next completion, waiting at most {@link #WAIT_NS}; AssertionError if none came. */
        WorkCompletion next() {
            long end = System.nanoTime() + WAIT_NS;
            while (System.nanoTime() < end) {
                if (cq.poll(wcs, 1) == 1) {
                    return wcs[0];
                }
                Thread.onSpinWait();
            }
            throw new AssertionError("no completion within " + WAIT_NS / 1_000_000_000 + " s on " + dev.name());
        }

        ShmLink link() {
            return (ShmLink) ((SoftDevice) dev).hca.link();
        }

        @Override
        public void close() {
            qp.close();
            mr.close();
            cq.close();
            pd.close();
            ctx.close();
            SoftDevices.remove(dev);
            arena.close();
        }
    }

    static void fill(MemorySegment s, int seed) {
        for (int i = 0; i < WRITE_BYTES; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
    }

    static int firstMismatch(MemorySegment s, int seed) {
        for (int i = 0; i < WRITE_BYTES; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) != (byte) (i * 31 + seed)) {
                return i;
            }
        }
        return -1;
    }

    /** The child: args addrA addrB port. Talks on stdin/stdout, one line per step. */
    public static void main(String[] args) throws Exception {
        InetAddress a = InetAddress.getByName(args[0]);
        InetAddress b = InetAddress.getByName(args[1]);
        int port = Integer.parseInt(args[2]);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Side s = new Side("shm-child", b, port)) {
            out.println(s.describe());
            String[] peer = in.readLine().split(" ");
            s.connect(a, Integer.parseInt(peer[1]), 14, 7);
            s.postRecv();
            out.println("CONNECTED");
            WorkCompletion r;
            try {
                r = s.next(); // the parent's SEND, after its WRITE
            } catch (AssertionError e) {
                System.err.println("shm child: nothing arrived; counters " + s.ctx.counters(1));
                throw e;
            }
            int seed = s.mr.segment().get(ValueLayout.JAVA_INT_UNALIGNED, RECV_AT);
            int bad = firstMismatch(s.mr.segment(), seed);
            out.println("GOT " + r.status() + " " + r.byteLen() + " mismatch " + bad);
            fill(s.mr.segment(), seed + 1);
            s.write(1, Long.parseLong(peer[3]), Integer.parseInt(peer[2]));
            WorkCompletion w = s.next();
            s.send(2, seed + 1);
            WorkCompletion x = s.next();
            out.println("SENT " + w.status() + " " + x.status());
            in.readLine(); // until the parent says so (or kills us)
        }
    }

    @Test
    void writesAndSendsCrossTwoJvmsByteForByteAndAKilledPeerEndsInRetryExceeded() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.17");
        InetAddress b = InetAddress.getByName("127.0.0.18");
        int port = SoftDevices.freeUdpPort(33791, a, b);
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        String cp = System.getProperty("java.class.path");
        String mp = System.getProperty("jdk.module.path");
        if (mp != null && !mp.isEmpty()) {
            cp = cp.isEmpty() ? mp : cp + File.pathSeparator + mp;
        }
        // The child checks no ICRCs (rdma4j.shm.icrc=false), the parent does: each sender follows its receiver.
        List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "-Drdma4j.shm.icrc=false", "-cp", cp,
                ShmTwoProcessTest.class.getName(), a.getHostAddress(), b.getHostAddress(), Integer.toString(port)));
        try (Side s = new Side("shm-parent", a, port)) {
            Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader r = child.inputReader(StandardCharsets.UTF_8)) {
                    for (String l; (l = r.readLine()) != null; ) {
                        lines.add(l);
                    }
                } catch (Exception e) {
                    // the child is gone
                }
                lines.add("EOF");
            });
            PrintStream toChild = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8);
            try {
                String[] peer = line(lines).split(" ");
                assertEquals("QP", peer[0], "the child's first line");
                toChild.println(s.describe());
                s.connect(b, Integer.parseInt(peer[1]), 16, 7); // 268 ms ACK timeout: a cold JVM on a busy host is slow
                assertEquals("CONNECTED", line(lines));
                s.postRecv();
                int seed = 0x5A;
                fill(s.mr.segment(), seed);
                s.write(1, Long.parseLong(peer[3]), Integer.parseInt(peer[2]));
                WorkCompletion w1 = s.next();
                assertEquals(WcStatus.SUCCESS, w1.status(), () -> "the WRITE to the child; " + s.ctx.counters(1));
                s.send(2, seed);
                assertEquals(WcStatus.SUCCESS, s.next().status(), "the SEND to the child");
                assertEquals("GOT SUCCESS 4 mismatch -1", line(lines), "what the child received");
                WorkCompletion r = s.next();
                assertEquals(WcStatus.SUCCESS, r.status(), "the child's SEND");
                assertEquals(seed + 1, s.mr.segment().get(ValueLayout.JAVA_INT_UNALIGNED, RECV_AT));
                assertEquals(-1, firstMismatch(s.mr.segment(), seed + 1), "first wrong byte of the child's WRITE");
                assertEquals("SENT SUCCESS SUCCESS", line(lines));
                ShmLink link = s.link();
                assertTrue(link.shmSentPackets() >= 11 && link.shmReceivedPackets() >= 11,
                        () -> "packets through the ring: " + link.counters());
                assertEquals(0, link.udp().sentDatagrams(), "nothing went as a datagram");

                // The child dies without closing anything: its ring file stays, its packets stop.
                child.destroyForcibly();
                assertTrue(child.waitFor(20, TimeUnit.SECONDS), "the child ends when killed");
                assertTrue(Files.exists(ShmLink.fileFor(Gid.of(b), port)), "a killed device leaves its ring file");
                s.write(3, Long.parseLong(peer[3]), Integer.parseInt(peer[2]));
                WorkCompletion dead = s.next();
                assertEquals(WcStatus.RETRY_EXC_ERR, dead.status(), () -> "a WRITE to the dead peer: " + dead);
            } finally {
                child.destroyForcibly();
                child.waitFor(20, TimeUnit.SECONDS);
            }
        }
        // The dead device's stale file does not keep its address: a new device there replaces it.
        Device again = SoftDevices.createUdp("shm-again", b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.SHM, null);
        try {
            again.open().close();
        } finally {
            SoftDevices.remove(again);
        }
        assertTrue(!Files.exists(ShmLink.fileFor(Gid.of(b), port)), "closing removes the ring file");
    }

    private static String line(LinkedBlockingQueue<String> lines) throws InterruptedException {
        String l = lines.poll(60, TimeUnit.SECONDS);
        assertTrue(l != null, "the child said nothing for 60 s");
        return l;
    }
}
