// SPDX-License-Identifier: Apache-2.0
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.ByteOrder;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.spi.GsiPort;

/**
 * Interop probe for QP1 of the soft device (interop/jobs/gsi.sh): from a soft UDP device bound to
 * {@code bind} (port 4791), sends a hand-built IB CM REQ MAD to QP1 of the port owning {@code dest}
 * (the kernel's rxe0), for an rdma_cm TCP-port service id nobody listens on, and waits for the
 * kernel CM's answer. Expects a REJ whose remote comm id is the REQ's local comm id and whose reason
 * is 8 (invalid service ID); prints what came and exits 0 only then.
 *
 * With {@code rep} last, the REQ carries rdma_cm's private-data header and goes to a port a kernel
 * rdma_cm listener (rping -s) listens on: the probe expects a REP (an MRA may come first), prints it
 * and rejects it (REJ, consumer defined), retrying while the answer is REJ 8 (not listening yet).
 *
 * <p>Usage: java -p verbs.jar:soft.jar --add-modules org.rdma4j.soft CmProbe.java BIND DEST [MODE [PORT [rep]]]
 * (MODE: the soft UDP device's mode, auto or raw; raw for IPv4, so that rxe accepts our ICRC).
 */
public final class CmProbe {
    private static final ValueLayout.OfShort BE16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final int ATTR_REQ = 0x10;
    private static final int ATTR_MRA = 0x11;
    private static final int ATTR_REJ = 0x12;
    private static final int ATTR_REP = 0x13;
    private static final int REJ_INVALID_SERVICE_ID = 8;

    public static void main(String[] args) throws Exception {
        InetAddress bindAddress = InetAddress.getByName(args[0]);
        InetAddress destAddress = InetAddress.getByName(args[1]);
        Gid dest = Gid.of(destAddress);
        String mode = args.length > 2 ? args[2] : "auto";
        int port = args.length > 3 ? Integer.parseInt(args[3]) : 7999;
        boolean wantRep = args.length > 4 && args[4].equals("rep");
        Device dev = Verbs.createDevice("soft:udp?name=gsiprobe&addr=" + args[0] + "&mode=" + mode);
        int rc = 1;
        try (Context ctx = dev.open(); Arena arena = Arena.ofConfined()) {
            if (!(ctx instanceof GsiPort.GsiAccess access)) {
                System.out.println("FAIL the soft context offers no GsiPort");
                return;
            }
            try (GsiPort gsi = access.openGsi(1, 1)) {
                long serviceId = (0x0106L << 16) | port;
                MemorySegment got = arena.allocate(GsiPort.MAD_SIZE);
                GsiPort.Source from = new GsiPort.Source();
                for (int attempt = 1; attempt <= 8 && rc != 0; attempt++) {
                    long tid = 0x5244_4d41_0000_0000L + attempt;
                    int commId = 0x1234_5600 + attempt;
                    MemorySegment req = request(arena, tid, commId, serviceId, ctx.device().guid(), gsi.localGid(), dest);
                    if (wantRep) {
                        privateDataHeader(req, bindAddress, destAddress, 40000 + attempt);
                    }
                    System.out.printf("probe: REQ %d from %s QP1 to %s QP1: comm id 0x%08x, service id 0x%016x (port %d)%s%n",
                            attempt, gsi.localGid(), dest, commId, serviceId, port,
                            wantRep ? ", with rdma_cm's private data header" : "");
                    gsi.send(req, dest, 0xFFFF);
                    long until = System.nanoTime() + 4_000_000_000L;
                    long left;
                    int verdict = -1; // -1: keep waiting, 0: pass, 1: fail, 2: retry
                    while (verdict < 0 && (left = until - System.nanoTime()) > 0) {
                        if (!gsi.receive(got, from, left)) {
                            break;
                        }
                        int cls = got.get(ValueLayout.JAVA_BYTE, 1) & 0xFF;
                        int attr = got.get(BE16, 16) & 0xFFFF;
                        System.out.printf("probe: MAD from %s: class 0x%02x version %d method 0x%02x attr 0x%04x tid 0x%016x%n",
                                from, cls, got.get(ValueLayout.JAVA_BYTE, 2), got.get(ValueLayout.JAVA_BYTE, 3) & 0xFF,
                                attr, got.get(BE64, 8));
                        boolean ours = got.get(BE64, 8) == tid && got.get(BE32, 28) == commId && from.qpn == 1;
                        if (cls != 0x07 || !ours) {
                            continue;
                        }
                        if (attr == ATTR_REJ) {
                            int rejected = (got.get(ValueLayout.JAVA_BYTE, 32) & 0xFF) >>> 6;
                            int reason = got.get(BE16, 34) & 0xFFFF;
                            System.out.printf("probe: REJ local comm id 0x%08x, remote comm id 0x%08x, message rejected %d,"
                                            + " reason %d%s%n", got.get(BE32, 24), got.get(BE32, 28), rejected, reason,
                                    reason == REJ_INVALID_SERVICE_ID ? " (invalid service ID)" : "");
                            if (wantRep) {
                                // the listener may not be up yet: try again with a new comm id
                                verdict = reason == REJ_INVALID_SERVICE_ID ? 2 : 1;
                            } else {
                                verdict = reason == REJ_INVALID_SERVICE_ID && rejected == 0 ? 0 : 1;
                                System.out.println(verdict == 0 ? "PASS kernel CM rejected our REQ: reason " + reason
                                        : "FAIL unexpected REJ (want reason 8 for the REQ)");
                            }
                        } else if (attr == ATTR_MRA) {
                            System.out.println("probe: MRA (the passive side needs time)");
                        } else if (attr == ATTR_REP && wantRep) {
                            int remoteComm = got.get(BE32, 24);
                            System.out.printf("probe: REP local comm id 0x%08x, local QPN 0x%06x, starting PSN 0x%06x,"
                                            + " responder resources %d, initiator depth %d, RNR retry %d%n", remoteComm,
                                    got.get(BE32, 36) >>> 8, got.get(BE32, 44) >>> 8,
                                    got.get(ValueLayout.JAVA_BYTE, 48) & 0xFF, got.get(ValueLayout.JAVA_BYTE, 49) & 0xFF,
                                    (got.get(ValueLayout.JAVA_BYTE, 51) & 0xFF) >>> 5);
                            gsi.send(reject(arena, tid, commId, remoteComm), dest, 0xFFFF);
                            System.out.println("probe: sent REJ (consumer defined, 28) for the REP");
                            System.out.println("PASS kernel rdma_cm accepted our REQ and answered with a REP");
                            verdict = 0;
                        }
                    }
                    if (verdict == 0) {
                        rc = 0;
                    } else if (verdict == 1) {
                        break;
                    } else {
                        System.out.println("probe: no answer to REQ " + attempt);
                        Thread.sleep(verdict == 2 ? 2000 : 0);
                    }
                }
                if (rc != 0) {
                    System.out.println("FAIL no expected answer from the kernel CM; counters: " + ctx.counters(1));
                } else {
                    System.out.println("probe: counters: " + ctx.counters(1));
                }
            }
        } finally {
            Verbs.removeDevice(dev);
        }
        System.exit(rc);
    }

    /**
     * rdma_cm's 36-byte header at the start of the REQ's private data (MAD offset 164): version 0, IP
     * version in the high nibble, the active side's port, its address, the passive side's address
     * (IPv4 in the last 4 of 16 bytes).
     */
    static void privateDataHeader(MemorySegment req, InetAddress src, InetAddress dst, int srcPort) {
        int at = 164;
        byte[] s = src.getAddress();
        byte[] d = dst.getAddress();
        req.set(ValueLayout.JAVA_BYTE, at, (byte) 0);
        req.set(ValueLayout.JAVA_BYTE, at + 1, (byte) (s.length == 4 ? 0x40 : 0x60));
        req.set(BE16, at + 2, (short) srcPort);
        MemorySegment.copy(s, 0, req, ValueLayout.JAVA_BYTE, at + 4 + 16 - s.length, s.length);
        MemorySegment.copy(d, 0, req, ValueLayout.JAVA_BYTE, at + 20 + 16 - d.length, d.length);
    }

    /** A REJ of the REP of our REQ (comm id {@code commId}): consumer defined (28). */
    static MemorySegment reject(Arena arena, long tid, int commId, int remoteCommId) {
        MemorySegment m = arena.allocate(GsiPort.MAD_SIZE);
        m.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
        m.set(ValueLayout.JAVA_BYTE, 1, (byte) 0x07);
        m.set(ValueLayout.JAVA_BYTE, 2, (byte) 2);
        m.set(ValueLayout.JAVA_BYTE, 3, (byte) 0x03);
        m.set(BE64, 8, tid);
        m.set(BE16, 16, (short) ATTR_REJ);
        m.set(BE32, 24, commId);
        m.set(BE32, 28, remoteCommId);
        m.set(ValueLayout.JAVA_BYTE, 32, (byte) (1 << 6)); // message rejected: REP
        m.set(BE16, 34, (short) 28);
        return m;
    }

    /** A CM REQ for an RC connection (offsets: docs of the IB CM, see /work/shared/reference/WIRE.md). */
    static MemorySegment request(Arena arena, long tid, int commId, long serviceId, long guid, Gid local, Gid remote) {
        MemorySegment m = arena.allocate(GsiPort.MAD_SIZE);
        m.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);    // base version
        m.set(ValueLayout.JAVA_BYTE, 1, (byte) 0x07); // management class: CM
        m.set(ValueLayout.JAVA_BYTE, 2, (byte) 2);    // class version
        m.set(ValueLayout.JAVA_BYTE, 3, (byte) 0x03); // method: Send
        m.set(BE64, 8, tid);
        m.set(BE16, 16, (short) ATTR_REQ);
        m.set(BE32, 24, commId);                       // local communication id
        m.set(BE64, 32, serviceId);
        m.set(BE64, 40, guid);                         // local CA GUID
        m.set(BE32, 52, 0);                            // local Q_Key (RC: unused)
        m.set(BE32, 56, 0x0000_4201 << 8 | 1);         // local QPN 0x4201, responder resources 1
        m.set(BE32, 60, 1);                            // local EECN 0, initiator depth 1
        // remote EECN 0; remote CM response timeout 20 [7:3], transport RC (0) [2:1], end-to-end flow control [0]
        m.set(BE32, 64, 20 << 3 | 1);
        m.set(BE32, 68, 0x00_1234 << 8 | 20 << 3 | 7); // starting PSN, local CM response timeout 20, retry 7
        m.set(BE16, 72, (short) 0xFFFF);              // P_Key
        m.set(ValueLayout.JAVA_BYTE, 74, (byte) (3 << 4 | 7)); // path MTU 1024 (3), RNR retry 7
        m.set(ValueLayout.JAVA_BYTE, 75, (byte) (15 << 4));    // max CM retries 15, no SRQ
        m.set(BE16, 76, (short) 0xFFFF);              // primary local LID: permissive (RoCE)
        m.set(BE16, 78, (short) 0xFFFF);              // primary remote LID
        for (int i = 0; i < 16; i++) {
            m.set(ValueLayout.JAVA_BYTE, 80 + i, local.byteAt(i));
            m.set(ValueLayout.JAVA_BYTE, 96 + i, remote.byteAt(i));
        }
        m.set(BE32, 112, 0);                           // flow label, packet rate
        m.set(ValueLayout.JAVA_BYTE, 116, (byte) 0);  // traffic class
        m.set(ValueLayout.JAVA_BYTE, 117, (byte) 64); // hop limit
        m.set(ValueLayout.JAVA_BYTE, 118, (byte) 0);  // SL 0, subnet local 0
        m.set(ValueLayout.JAVA_BYTE, 119, (byte) (18 << 3)); // local ACK timeout 18
        return m;
    }
}
