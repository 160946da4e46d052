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
 * <p>Usage: java -p verbs.jar:soft.jar --add-modules org.rdma4j.soft CmRejProbe.java BIND DEST [MODE [PORT]]
 * (MODE: the soft UDP device's mode, auto or raw; raw for IPv4, so that rxe accepts our ICRC).
 */
public final class CmRejProbe {
    private static final ValueLayout.OfShort BE16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final int ATTR_REQ = 0x10;
    private static final int ATTR_REJ = 0x12;
    private static final int REJ_INVALID_SERVICE_ID = 8;

    public static void main(String[] args) throws Exception {
        Gid dest = Gid.of(InetAddress.getByName(args[1]));
        String mode = args.length > 2 ? args[2] : "auto";
        int port = args.length > 3 ? Integer.parseInt(args[3]) : 7999;
        Device dev = Verbs.createDevice("soft:udp?name=gsiprobe&addr=" + args[0] + "&mode=" + mode);
        int rc = 1;
        try (Context ctx = dev.open(); Arena arena = Arena.ofConfined()) {
            if (!(ctx instanceof GsiPort.GsiAccess access)) {
                System.out.println("FAIL the soft context offers no GsiPort");
                return;
            }
            try (GsiPort gsi = access.openGsi(1, 1)) {
                long tid = 0x5244_4d41_0000_0001L;
                int commId = 0x1234_5678;
                long serviceId = (0x0106L << 16) | port;
                MemorySegment req = request(arena, tid, commId, serviceId, ctx.device().guid(), gsi.localGid(), dest);
                MemorySegment got = arena.allocate(GsiPort.MAD_SIZE);
                GsiPort.Source from = new GsiPort.Source();
                System.out.printf("probe: REQ from %s QP1 to %s QP1: comm id 0x%08x, service id 0x%016x (port %d)%n",
                        gsi.localGid(), dest, commId, serviceId, port);
                for (int attempt = 1; attempt <= 5 && rc != 0; attempt++) {
                    gsi.send(req, dest, 0xFFFF);
                    long until = System.nanoTime() + 4_000_000_000L;
                    long left;
                    while ((left = until - System.nanoTime()) > 0) {
                        if (!gsi.receive(got, from, left)) {
                            break;
                        }
                        int cls = got.get(ValueLayout.JAVA_BYTE, 1) & 0xFF;
                        int method = got.get(ValueLayout.JAVA_BYTE, 3) & 0xFF;
                        int attr = got.get(BE16, 16) & 0xFFFF;
                        System.out.printf("probe: MAD from %s: class 0x%02x version %d method 0x%02x attr 0x%04x tid 0x%016x%n",
                                from, cls, got.get(ValueLayout.JAVA_BYTE, 2), method, attr, got.get(BE64, 8));
                        if (cls != 0x07 || attr != ATTR_REJ) {
                            continue;
                        }
                        int remoteComm = got.get(BE32, 28);
                        int rejected = (got.get(ValueLayout.JAVA_BYTE, 32) & 0xFF) >>> 6;
                        int reason = got.get(BE16, 34) & 0xFFFF;
                        System.out.printf("probe: REJ local comm id 0x%08x, remote comm id 0x%08x, message rejected %d,"
                                        + " reason %d%s%n", got.get(BE32, 24), remoteComm, rejected, reason,
                                reason == REJ_INVALID_SERVICE_ID ? " (invalid service ID)" : "");
                        boolean ok = remoteComm == commId && reason == REJ_INVALID_SERVICE_ID && rejected == 0
                                && got.get(BE64, 8) == tid && from.qpn == 1;
                        System.out.println(ok ? "PASS kernel CM rejected our REQ: reason " + reason
                                : "FAIL unexpected REJ (want reason 8, our comm id and TID, from QP1)");
                        rc = ok ? 0 : 1;
                        break;
                    }
                    if (rc != 0) {
                        System.out.println("probe: no REJ after attempt " + attempt);
                    }
                }
                if (rc != 0) {
                    System.out.println("FAIL no REJ from the kernel CM; counters: " + ctx.counters(1));
                } else {
                    System.out.println("probe: counters: " + ctx.counters(1));
                }
            }
        } finally {
            Verbs.removeDevice(dev);
        }
        System.exit(rc);
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
