// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The TCP handshake of the ibv_*_pingpong tools. The client connects and writes its address
 * messages, reads the server's, then writes {@code "done"} with its NUL (5 bytes) and closes. The server
 * accepts one client, reads its messages, connects its queue pairs to them (so it is ready before the
 * client learns its address), writes its own, and reads the 5 bytes of "done". ibv_rc/uc/ud_pingpong
 * send one message each way; ibv_srq_pingpong sends 256 (its MAX_QP), the ones past its QPs all zero.
 *
 * <p>The C tools block without limit; here the client's connect gives up after the exchange timeout,
 * and so does the exchange once connected: one deadline for all of its reads, so a silent peer and one
 * that trickles a byte at a time are cut off alike. (Its writes, at most 256 messages of 52 bytes, fit
 * the socket's buffers.) Waiting for a client to connect is still unbounded, as it is for a C server.
 */
final class Exchange {
    /** "done" and its NUL, as the clients send it. */
    static final byte[] DONE = {'d', 'o', 'n', 'e', 0};
    private static final int ACCEPT_POLL_MS = 200;

    /** Connects the local queue pairs to the remote addresses; the server does it before answering. */
    interface Connector {
        void connect(List<Dest> remote) throws PingpongFailure;
    }

    private final int timeoutMs;
    /** The peer's address as host:port once connected (for messages). */
    private String peer = "the peer";
    /** ibv_srq_pingpong's variants of the messages (it numbers the addresses). */
    private final boolean srq;

    Exchange(int timeoutMs, boolean srq) {
        this.timeoutMs = timeoutMs;
        this.srq = srq;
    }

    /** The client side: {@code mine} holds every message to send (1, or 256 for srq); returns as many. */
    List<Dest> client(String host, int port, List<Dest> mine) throws PingpongFailure {
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(host);
        } catch (UnknownHostException e) {
            throw new PingpongFailure("Name or service not known for " + host + ":" + port);
        }
        Socket socket = null;
        IOException last = null;
        for (InetAddress a : addresses) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(a, port), timeoutMs);
                socket = s;
                break;
            } catch (IOException e) {
                last = e;
                closeQuietly(s);
            }
        }
        if (socket == null) {
            throw PingpongFailure.of("Couldn't connect to " + host + ":" + port, last);
        }
        Socket s = socket;
        peer = describe(s);
        try {
            long deadline = deadline();
            try {
                write(s, mine);
            } catch (IOException e) {
                throw PingpongFailure.of("Couldn't send local address", e);
            }
            List<Dest> remote = new ArrayList<>(mine.size());
            byte[] msg = new byte[Dest.WIRE_BYTES];
            for (int i = 0; i < mine.size(); i++) {
                Read r = readFully(s, msg, msg.length, deadline);
                if (r.error != null) {
                    throw srq
                            ? new PingpongFailure("client read: " + r.error,
                                    r.n + "/" + Dest.WIRE_BYTES + ": Couldn't read remote address [" + i + "]")
                            : new PingpongFailure("client read/write: " + r.error,
                                    "Couldn't read/write remote address");
                }
                remote.add(parse(msg, i));
            }
            try {
                s.getOutputStream().write(DONE);
                s.getOutputStream().flush();
            } catch (IOException e) {
                throw srq
                        ? new PingpongFailure("client write: " + PingpongFailure.describe(e))
                        : new PingpongFailure("client read/write: " + PingpongFailure.describe(e),
                                "Couldn't read/write remote address");
            }
            return remote;
        } finally {
            closeQuietly(s);
        }
    }

    /**
     * The server side: waits for a client on {@code port} (any local address), reads its messages, calls
     * {@code connector}, then answers with {@code mine} and waits for "done".
     */
    List<Dest> server(int port, List<Dest> mine, Connector connector) throws PingpongFailure {
        Socket conn;
        try (ServerSocket listener = new ServerSocket()) {
            listener.setReuseAddress(true);
            try {
                listener.bind(new InetSocketAddress(port), 1);
            } catch (IOException e) {
                throw PingpongFailure.of("Couldn't listen to port " + port, e);
            }
            conn = accept(listener);
        } catch (IOException e) {
            throw PingpongFailure.of("accept() failed", e);
        }
        Socket s = conn;
        peer = describe(s);
        try {
            long deadline = deadline();
            List<Dest> remote = new ArrayList<>(mine.size());
            byte[] msg = new byte[Dest.WIRE_BYTES];
            for (int i = 0; i < mine.size(); i++) {
                Read r = readFully(s, msg, msg.length, deadline);
                if (r.error != null) {
                    throw new PingpongFailure("server read: " + r.error, r.n + "/" + Dest.WIRE_BYTES
                            + ": Couldn't read remote address" + (srq ? " [" + i + "]" : ""));
                }
                remote.add(parse(msg, i));
            }
            try {
                connector.connect(remote);
            } catch (PingpongFailure f) {
                throw f.then("Couldn't connect to remote QP");
            }
            try {
                write(s, mine);
            } catch (IOException e) {
                throw PingpongFailure.of(srq ? "Couldn't send local address" : "Couldn't send/recv local address", e);
            }
            byte[] done = new byte[DONE.length];
            Read r = readFully(s, done, done.length, deadline);
            if (r.error != null) {
                throw new PingpongFailure("server read: " + r.error, "Couldn't send/recv local address");
            }
            return remote;
        } finally {
            closeQuietly(s);
        }
    }

    /** The peer of the exchange as host:port ("the peer" before a connection). */
    String peer() {
        return peer;
    }

    private static String describe(Socket s) {
        return s.getInetAddress().getHostAddress() + ":" + s.getPort();
    }

    private long deadline() {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    }

    /** Blocks until a client connects, like accept(2), but stays interruptible. */
    private static Socket accept(ServerSocket listener) throws IOException, PingpongFailure {
        listener.setSoTimeout(ACCEPT_POLL_MS);
        for (;;) {
            try {
                return listener.accept();
            } catch (SocketTimeoutException e) {
                if (Thread.currentThread().isInterrupted()) {
                    throw new PingpongFailure("accept() failed", "rdma4j: interrupted");
                }
            }
        }
    }

    private static void write(Socket s, List<Dest> mine) throws IOException {
        s.setTcpNoDelay(true);
        OutputStream out = s.getOutputStream();
        for (Dest d : mine) {
            out.write(d.toWire());
        }
        out.flush();
    }

    private Dest parse(byte[] msg, int i) throws PingpongFailure {
        try {
            return Dest.parse(msg);
        } catch (IllegalArgumentException e) {
            throw new PingpongFailure("Invalid remote address" + (srq ? " [" + i + "]" : "") + ": " + e.getMessage());
        }
    }

    /** How many bytes arrived, and why not all of them (null if they did). */
    private record Read(int n, String error) {}

    private Read readFully(Socket s, byte[] b, int len, long deadline) {
        int n = 0;
        try {
            InputStream in = s.getInputStream();
            while (n < len) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return new Read(n, timedOut());
                }
                s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
                int r = in.read(b, n, len - n);
                if (r < 0) {
                    return new Read(n, "connection closed by the peer");
                }
                n += r;
            }
            return new Read(n, null);
        } catch (SocketTimeoutException e) {
            return new Read(n, timedOut());
        } catch (IOException e) {
            return new Read(n, PingpongFailure.describe(e));
        }
    }

    private String timedOut() {
        return "timed out after " + timeoutMs / 1000.0 + " s (--exchange-timeout)";
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }
}
