// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.rdma4j.tools.text.PeerText;

/**
 * perftest's out-of-band TCP channel ({@code perftest_communication.c} without rdma_cm): one connection,
 * then fixed-size messages in lock step, the client writing first and the server reading first. The
 * messages, in the order the tests send them:
 * <ol>
 * <li>the version, 16 bytes ("6.06" and NULs);</li>
 * <li>the cycle buffer (page size) and the cache line size, each a 4-byte big-endian int; both sides
 *     take the larger;</li>
 * <li>the MTU as ibv_mtu enum value in decimal ASCII, 2 bytes ("3\0" for 1024); both take the smaller;</li>
 * <li>{@link PerfDest} key messages: every "hand shake" and every barrier is one of them;</li>
 * <li>bandwidth reports: size and iterations as 8-byte big-endian integers, then peak, average and
 *     message rate as big-endian IEEE doubles, each its own exchange;</li>
 * <li>at the end a last key message and "done\0" from each side.</li>
 * </ol>
 * The timeout given is a deadline for the whole exchange, counted from the connection (accept or
 * connect): every read and write of it together, not each read, so a peer that trickles a byte at a
 * time is cut off as one that sends nothing. {@link #timeoutMs(int)} starts a new step with a new
 * deadline (the barrier after a run waits as long as the run may take). A peer that goes away, stops
 * or is too slow is an error that names the message, the peer and the timeout, never a hang.
 * Not thread safe.
 */
final class Comm implements AutoCloseable {
    /** The version rdma4j announces: the protocol of perftest 6.06 (Debian's 4.5-0.17 package). */
    static final String VERSION = "6.06";
    static final int VERSION_BYTES = 16;
    /** perftest refuses peers older than this. */
    static final double MIN_VERSION = 5.70;

    private final Socket socket;
    private final boolean client;
    private final DataInputStream in;
    private final OutputStream out;
    private int timeoutMs;
    /** When the current step must be done ({@link System#nanoTime()}). */
    private long deadline;
    /** The --exchange-timeout the connection started with (a later step may wait longer). */
    private final int exchangeMs;
    /** With -R: the connection manager's QP that carries the messages instead of the socket. */
    private final CmLink cm;

    /**
     * With -R: the same messages, each one SEND over {@code link} (perftest's rdma_write_data), key
     * messages as the binary {@code struct pingpong_dest} ({@link PerfDest#toStruct()}), no "done" at the end.
     */
    Comm(CmLink link, boolean client) {
        this.socket = null;
        this.in = null;
        this.out = null;
        this.cm = link;
        this.client = client;
        this.timeoutMs = link.timeoutMs();
        this.exchangeMs = timeoutMs;
        this.deadline = deadlineIn(timeoutMs);
    }

    /** The connection manager's link with -R, else null. */
    CmLink cmLink() {
        return cm;
    }

    private Comm(Socket socket, boolean client, int timeoutMs) throws IOException {
        this.socket = socket;
        this.client = client;
        this.timeoutMs = timeoutMs;
        this.exchangeMs = timeoutMs;
        this.deadline = deadlineIn(timeoutMs);
        this.cm = null;
        socket.setTcpNoDelay(true);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** The client side: connects to {@code host:port} (perftest resolves IPv4 only; so does this). */
    static Comm connect(String host, int port, int timeoutMs) throws PerfFailure {
        return connect(null, host, port, timeoutMs);
    }

    /** {@link #connect(String, int, int)} from {@code source} (--source_ip), or from any address when null. */
    static Comm connect(InetAddress source, String host, int port, int timeoutMs) throws PerfFailure {
        InetAddress[] addrs;
        try {
            addrs = InetAddress.getAllByName(host);
        } catch (IOException e) {
            throw PerfFailure.of("Problem in resolving basic address and port", e);
        }
        IOException last = null;
        for (InetAddress a : addrs) {
            Socket s = new Socket();
            try {
                if (source != null) {
                    s.bind(new InetSocketAddress(source, 0)); // perftest: "Failed to bind socket"
                }
                s.connect(new InetSocketAddress(a, port), timeoutMs);
                return new Comm(s, true, timeoutMs);
            } catch (IOException e) {
                last = e;
                try {
                    s.close();
                } catch (IOException ignored) {
                    // nothing to release
                }
            }
        }
        PerfFailure f = new PerfFailure("Couldn't connect to " + host + ":" + port);
        if (last != null) {
            f.then("rdma4j: " + last.getMessage());
        }
        throw f;
    }

    /** A listening server socket on {@code port} (0: any free one) of {@code bind} (null: all addresses). */
    static ServerSocket listen(InetAddress bind, int port) throws PerfFailure {
        try {
            ServerSocket ss = new ServerSocket();
            ss.setReuseAddress(true);
            ss.bind(new InetSocketAddress(bind, port), 1);
            return ss;
        } catch (IOException e) {
            throw PerfFailure.of("Couldn't listen to port " + port, e);
        }
    }

    /** The server side: waits at most {@code acceptTimeoutMs} for one client, then closes the listener. */
    static Comm accept(ServerSocket ss, int acceptTimeoutMs, int timeoutMs) throws PerfFailure {
        try (ss) {
            ss.setSoTimeout(acceptTimeoutMs);
            Socket s = ss.accept();
            return new Comm(s, false, timeoutMs);
        } catch (SocketTimeoutException e) {
            throw new PerfFailure("accept() failed",
                    "rdma4j: no client connected within " + acceptTimeoutMs / 1000 + " s (--exchange-timeout)");
        } catch (IOException e) {
            throw PerfFailure.of("accept() failed", e);
        }
    }

    boolean isClient() {
        return client;
    }

    /**
     * Starts the next step of the exchange: what follows must be done within {@code ms} from now (the
     * barrier after a long run waits longer).
     */
    void timeoutMs(int ms) {
        timeoutMs = ms;
        deadline = deadlineIn(ms);
        if (cm != null) {
            cm.timeoutMs(ms);
        }
    }

    private static long deadlineIn(int ms) {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    }

    /** The peer as host:port, for messages. */
    String peer() {
        InetSocketAddress a = cm != null ? cm.peer()
                : (InetSocketAddress) socket.getRemoteSocketAddress();
        return a == null ? "the peer" : a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    /** The failure of a step that did not end by the deadline. */
    private PerfFailure late(String step, String what, int got, int of) {
        String why = timeoutMs == exchangeMs ? "--exchange-timeout"
                : "--exchange-timeout and the length of the run";
        return new PerfFailure("Couldn't " + step + " " + what, "rdma4j: the exchange with " + peer()
                + " did not finish within " + timeoutMs / 1000.0 + " s (" + why + "): " + got + " of " + of
                + " bytes of the " + what + (step.equals("read") ? " arrived" : " were sent"));
    }

    /** One lock-step exchange of equal-sized messages (perftest's ctx_xchg_data). */
    byte[] xchg(byte[] mine, String what) throws PerfFailure {
        byte[] theirs = new byte[mine.length];
        if (client) {
            write(mine, what);
            read(theirs, what);
        } else {
            read(theirs, what);
            write(mine, what);
        }
        return theirs;
    }

    /**
     * Sends one message. A write is checked against the deadline before it starts; it cannot block past
     * it in lock step, where at most one message (108 bytes or less) is unread by the peer and the
     * socket's send buffer holds it.
     */
    private void write(byte[] b, String what) throws PerfFailure {
        if (System.nanoTime() - deadline >= 0) {
            throw late("send", what, 0, b.length);
        }
        if (cm != null) {
            cm.write(b, what, deadline);
            return;
        }
        try {
            out.write(b);
            out.flush();
        } catch (IOException e) {
            throw PerfFailure.of("Couldn't send " + what, e);
        }
    }

    private void read(byte[] b, String what) throws PerfFailure {
        if (cm != null) {
            cm.read(b, what, deadline);
            return;
        }
        read(b, what, deadline);
    }

    /** Reads all of {@code b}, each piece waiting only for what is left until {@code until}. */
    private void read(byte[] b, String what, long until) throws PerfFailure {
        int n = 0;
        try {
            while (n < b.length) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    throw late("read", what, n, b.length);
                }
                socket.setSoTimeout((int) Math.clamp(TimeUnit.NANOSECONDS.toMillis(left) + 1, 1, Integer.MAX_VALUE));
                int r = in.read(b, n, b.length - n);
                if (r < 0) {
                    throw new PerfFailure("Couldn't read " + what, "rdma4j: " + peer() + " closed the connection"
                            + (n > 0 ? " after " + n + " of " + b.length + " bytes" : ""));
                }
                n += r;
            }
        } catch (SocketTimeoutException e) {
            throw late("read", what, n, b.length);
        } catch (IOException e) {
            throw PerfFailure.of("Couldn't read " + what, e);
        }
    }

    /** exchange_versions: returns the peer's version string. */
    String exchangeVersions() throws PerfFailure {
        byte[] mine = new byte[VERSION_BYTES];
        byte[] v = VERSION.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(v, 0, mine, 0, v.length);
        return cString(xchg(mine, "version"));
    }

    /** check_version_compatibility: perftest's atof of the peer's version must be at least 5.70. */
    static void checkVersion(String remote) throws PerfFailure {
        if (atof(remote) < MIN_VERSION) {
            throw new PerfFailure("Current implementation is not compatible with versions older than 5.70",
                    "rdma4j: the peer announced version '" + PeerText.printable(remote) + "'");
        }
    }

    /** check_sys_data: exchanges {cycle buffer, cache line}; returns the peer's pair. */
    int[] exchangeSysData(int cycleBuffer, int cacheLine) throws PerfFailure {
        int rc = ByteBuffer.wrap(xchg(ByteBuffer.allocate(4).putInt(cycleBuffer).array(), "page size")).getInt();
        int rl = ByteBuffer.wrap(xchg(ByteBuffer.allocate(4).putInt(cacheLine).array(), "cache line size")).getInt();
        return new int[] {rc, rl};
    }

    /** check_mtu: exchanges the MTU enum values (1..5) as 2 ASCII bytes; returns the peer's, or -1. */
    int exchangeMtu(int mtuEnum) throws PerfFailure {
        byte[] mine = new byte[2];
        byte[] digits = Integer.toString(mtuEnum).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(digits, 0, mine, 0, Math.min(2, digits.length));
        return (int) strtol(cString(xchg(mine, "MTU")));
    }

    /** ctx_hand_shake: one key message each way. */
    PerfDest handShake(PerfDest mine, boolean withGid) throws PerfFailure {
        if (cm != null) {
            return PerfDest.fromStruct(xchg(mine.toStruct(), "remote address"));
        }
        byte[] theirs = xchg(mine.toWire(withGid), "remote address");
        try {
            return PerfDest.fromWire(theirs, withGid);
        } catch (IllegalArgumentException e) {
            throw new PerfFailure(e.getMessage(), "Unable to read from socket/rdma_cm");
        }
    }

    /** xchg_bw_reports (no per-port fields): sends mine, returns the peer's. */
    BwReport exchangeBwReport(BwReport mine) throws PerfFailure {
        long size = ByteBuffer.wrap(xchg(ByteBuffer.allocate(8).putLong(mine.size()).array(), "reports")).getLong();
        long iters = ByteBuffer.wrap(xchg(ByteBuffer.allocate(8).putLong(mine.iters()).array(), "reports")).getLong();
        double peak = xchgDouble(mine.bwPeak());
        double avg = xchgDouble(mine.bwAvg());
        double rate = xchgDouble(mine.msgRateAvg());
        return new BwReport(size, iters, peak, avg, rate);
    }

    private double xchgDouble(double v) throws PerfFailure {
        return ByteBuffer.wrap(xchg(ByteBuffer.allocate(8).putDouble(v).array(), "reports")).getDouble();
    }

    /**
     * ctx_close_connection: a last key message, then "done\0" each way. perftest never reads the
     * peer's "done"; reading it here (briefly) lets this side close without resetting the connection
     * under a peer that is still writing.
     */
    void closeConnection(PerfDest mine, boolean withGid) throws PerfFailure {
        handShake(mine, withGid);
        if (cm != null) {
            return; // perftest writes "done" on the socket only
        }
        write("done\0".getBytes(StandardCharsets.US_ASCII), "done");
        try {
            read(new byte[5], "done", Math.min(deadline, deadlineIn(2000)));
        } catch (PerfFailure e) {
            // the peer may already be gone: it has what it needs
        }
    }

    /**
     * Whether the peer has written something this side has not read yet (send_bw --run_infinitely's
     * receiver: the sender's closing exchange). Does not block. With -R always false (the messages
     * travel on a QP). An error reading the socket says true: the next exchange reports it.
     */
    boolean peerWaiting() {
        if (cm != null) {
            return false;
        }
        try {
            return in.available() > 0;
        } catch (IOException e) {
            return true;
        }
    }

    @Override
    public void close() {
        if (cm != null) {
            cm.close();
            return;
        }
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    /** The peer's text up to its NUL, every non-printable byte replaced ({@link PeerText}). */
    static String cString(byte[] b) {
        return PeerText.cString(b);
    }

    /** C's atof on a version string: the leading decimal number, 0 when there is none. */
    static double atof(String s) {
        String t = s.strip();
        int i = 0;
        while (i < t.length() && (Character.isDigit(t.charAt(i)) || t.charAt(i) == '.'
                || (i == 0 && (t.charAt(i) == '-' || t.charAt(i) == '+')))) {
            i++;
        }
        while (i > 0) {
            try {
                return Double.parseDouble(t.substring(0, i));
            } catch (NumberFormatException e) {
                i--;
            }
        }
        return 0;
    }

    /** C's strtol(s, NULL, 10): leading digits, 0 when there are none. */
    static long strtol(String s) {
        int i = 0;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        return i == 0 ? 0 : Long.parseLong(s.substring(0, i));
    }

    /** For tests: reads what is left (e.g. to check the exact bytes sent). */
    InputStream input() {
        return in;
    }
}
