// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import org.rdma4j.tools.text.PeerText;
import org.rdma4j.verbs.QpEndpoint;

/**
 * The TCP side channel of a two-JVM stress run, in the manner of the pingpong exchange: the client
 * connects and sends a {@link Hello} (the run's parameters and its queue pairs), the server sets up
 * and answers with a {@link Reply} (its queue pairs and the rkeys of its regions); during the run the
 * client sends a {@code PROGRESS} frame about once a second; at the end it sends an {@link End} with
 * what the server should have seen, and the server answers with its {@link Verdict}. Big-endian, one
 * type byte before each frame after the setup. Reads give up after the timeout set with
 * {@link #timeout}, so a silent peer is an error, never a hang.
 *
 * <p>One thread may read while another writes; not thread safe otherwise.
 */
final class Control implements Closeable {
    private static final int MAGIC = 0x72347374; // "r4st"
    private static final int VERSION = 2;
    private static final int ACCEPT_POLL_MS = 200;
    private static final byte PROGRESS = 'P';
    private static final byte END = 'E';
    private static final byte VERDICT = 'V';

    /** The run's parameters (chosen by the client) and the client's queue pairs. */
    record Hello(long messages, long seed, int qps, int maxSize, int mtu, QpEndpoint[] endpoints) {
    }

    /** Where the client sends and what it may touch on the server, per queue pair. */
    record Target(QpEndpoint endpoint, long targetAddr, int targetRkey, long readAddr, int readRkey, long casAddr,
                  int casRkey) {
    }

    /** The server's answer to a {@link Hello}: an error, or the counter and one target per pair. */
    record Reply(String error, long counterAddr, int counterRkey, Target[] targets) {
    }

    /**
     * The client's end of the run: what it verified itself, and per queue pair the receives (SEND and
     * WRITE_WITH_IMM) the server should have completed, their hash, and the CMP_SWAP word's final value;
     * {@code fetchAdds} FETCH_ADDs completed on the shared counter.
     */
    record End(long verified, long dataErrors, long duplicates, long errorCompletions, long retransmits,
               long fetchAdds, String firstError, long[] receives, long[] hashes, long[] casFinal) {
        boolean clean() {
            return dataErrors == 0 && duplicates == 0 && errorCompletions == 0 && firstError.isEmpty();
        }
    }

    /**
     * What the server saw and checked. The hashes and atomic words are only {@code compared} against a
     * client that finished cleanly (after an early stop they cannot match). A mismatch also counts as a
     * data error (or, for a counter that went too far, as duplicate executions). {@code ok()} is the
     * server's part of the run's verdict.
     */
    record Verdict(long receives, long dataErrors, long orderErrors, long duplicates, long errorCompletions,
                   boolean compared, boolean hashesMatch, boolean atomicsMatch, long retransmits,
                   String firstError) {
        boolean ok() {
            return dataErrors == 0 && orderErrors == 0 && duplicates == 0 && errorCompletions == 0 && compared
                    && hashesMatch && atomicsMatch && firstError.isEmpty();
        }

        /** One line for people. */
        String describe() {
            return "receives=" + receives + " data_errors=" + dataErrors + " order_errors=" + orderErrors
                    + " duplicates=" + duplicates + " error_completions=" + errorCompletions
                    + (compared ? " hashes=" + (hashesMatch ? "match" : "MISMATCH") + " atomics="
                            + (atomicsMatch ? "match" : "MISMATCH")
                            : " hashes=not-compared atomics=not-compared (the client did not finish cleanly)");
        }
    }

    /** A broken exchange: a message for the user. */
    static final class Failure extends Exception {
        Failure(String message) {
            super(message, null, false, false);
        }
    }

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final String peer;

    private Control(Socket socket, String peer) throws IOException {
        this.socket = socket;
        this.peer = peer;
        socket.setTcpNoDelay(true);
        in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    }

    /** The client side: connects to {@code host}:{@code port} within {@code timeoutMs}. */
    static Control connect(String host, int port, int timeoutMs) throws Failure {
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(host);
        } catch (UnknownHostException e) {
            throw new Failure("Name or service not known for " + host + ":" + port);
        }
        IOException last = null;
        for (InetAddress a : addresses) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(a, port), timeoutMs);
                Control c = new Control(s, "server " + host + ":" + port);
                c.timeout(timeoutMs);
                return c;
            } catch (IOException e) {
                last = e;
                closeQuietly(s);
            }
        }
        throw new Failure("Couldn't connect to " + host + ":" + port + (last != null ? ": " + describe(last) : ""));
    }

    /** The server side: listens on {@code port} (any address). */
    static ServerSocket listen(int port) throws Failure {
        try {
            ServerSocket listener = new ServerSocket();
            listener.setReuseAddress(true);
            try {
                listener.bind(new InetSocketAddress(port), 1);
            } catch (IOException e) {
                closeQuietly(listener);
                throw e;
            }
            return listener;
        } catch (IOException e) {
            throw new Failure("Couldn't listen to TCP port " + port + ": " + describe(e));
        }
    }

    /** Waits for one client, like accept(2), but stays interruptible. */
    static Control accept(ServerSocket listener, int timeoutMs) throws Failure {
        try {
            listener.setSoTimeout(ACCEPT_POLL_MS);
            for (;;) {
                try {
                    Socket s = listener.accept();
                    Control c = new Control(s, "client " + s.getInetAddress().getHostAddress());
                    c.timeout(timeoutMs);
                    return c;
                } catch (SocketTimeoutException e) {
                    if (Thread.currentThread().isInterrupted()) {
                        throw new Failure("interrupted while waiting for a client");
                    }
                }
            }
        } catch (IOException e) {
            throw new Failure("accept() failed: " + describe(e));
        }
    }

    /** How long a read may wait; 0 waits forever. */
    void timeout(int ms) throws Failure {
        try {
            socket.setSoTimeout(ms);
        } catch (IOException e) {
            throw failure("set the timeout", e);
        }
    }

    void sendHello(Hello h) throws Failure {
        try {
            out.writeInt(MAGIC);
            out.writeInt(VERSION);
            out.writeLong(h.messages());
            out.writeLong(h.seed());
            out.writeInt(h.qps());
            out.writeInt(h.maxSize());
            out.writeInt(h.mtu());
            for (int i = 0; i < h.qps(); i++) {
                out.write(h.endpoints()[i].toBytes());
            }
            out.flush();
        } catch (IOException e) {
            throw failure("send the run's parameters", e);
        }
    }

    /** The client's {@link Hello}; {@code maxQps} bounds what a broken peer can make the server allocate. */
    Hello readHello(int maxQps) throws Failure {
        try {
            if (in.readInt() != MAGIC) {
                throw new Failure("the " + peer + " is not an rdma4j stress client (pingpong?)");
            }
            int version = in.readInt();
            if (version != VERSION) {
                throw new Failure("the " + peer + " speaks stress protocol " + version + ", not " + VERSION);
            }
            long messages = in.readLong();
            long seed = in.readLong();
            int qps = in.readInt();
            int maxSize = in.readInt();
            int mtu = in.readInt();
            if (qps < 1 || qps > maxQps) {
                throw new Failure("the " + peer + " asked for " + qps + " queue pairs");
            }
            QpEndpoint[] endpoints = new QpEndpoint[qps];
            for (int i = 0; i < qps; i++) {
                endpoints[i] = readEndpoint();
            }
            return new Hello(messages, seed, qps, maxSize, mtu, endpoints);
        } catch (IOException e) {
            throw failure("read the run's parameters", e);
        }
    }

    void sendReply(Reply r) throws Failure {
        try {
            out.writeUTF(r.error() == null ? "" : r.error());
            if (r.error() == null) {
                out.writeLong(r.counterAddr());
                out.writeInt(r.counterRkey());
                for (Target t : r.targets()) {
                    out.write(t.endpoint().toBytes());
                    out.writeLong(t.targetAddr());
                    out.writeInt(t.targetRkey());
                    out.writeLong(t.readAddr());
                    out.writeInt(t.readRkey());
                    out.writeLong(t.casAddr());
                    out.writeInt(t.casRkey());
                }
            }
            out.flush();
        } catch (IOException e) {
            throw failure("send the server's queue pairs", e);
        }
    }

    /** The server's {@link Reply} for {@code qps} queue pairs; a Failure if it refused. */
    Reply readReply(int qps) throws Failure {
        try {
            String error = PeerText.printable(in.readUTF());
            if (!error.isEmpty()) {
                throw new Failure("the server refused the run: " + error);
            }
            long counterAddr = in.readLong();
            int counterRkey = in.readInt();
            Target[] targets = new Target[qps];
            for (int i = 0; i < qps; i++) {
                targets[i] = new Target(readEndpoint(), in.readLong(), in.readInt(), in.readLong(), in.readInt(),
                        in.readLong(), in.readInt());
            }
            return new Reply(null, counterAddr, counterRkey, targets);
        } catch (IOException e) {
            throw failure("read the server's queue pairs", e);
        }
    }

    /** About once a second during the run, so the server knows the client is alive. */
    void sendProgress(long verified) throws Failure {
        try {
            out.writeByte(PROGRESS);
            out.writeLong(verified);
            out.flush();
        } catch (IOException e) {
            throw failure("send progress", e);
        }
    }

    void sendEnd(End e) throws Failure {
        try {
            out.writeByte(END);
            out.writeLong(e.verified());
            out.writeLong(e.dataErrors());
            out.writeLong(e.duplicates());
            out.writeLong(e.errorCompletions());
            out.writeLong(e.retransmits());
            out.writeLong(e.fetchAdds());
            out.writeUTF(e.firstError());
            out.writeInt(e.receives().length);
            for (int i = 0; i < e.receives().length; i++) {
                out.writeLong(e.receives()[i]);
                out.writeLong(e.hashes()[i]);
                out.writeLong(e.casFinal()[i]);
            }
            out.flush();
        } catch (IOException ex) {
            throw failure("send the end of the run", ex);
        }
    }

    /** What the client sends during the run: a progress count, or the end of the run. */
    interface ClientFrames {
        void progress(long verified);

        void end(End end);
    }

    /**
     * Reads the client's frames until its {@link End}, calling {@code sink} for each; a Failure if the
     * client goes away or says nothing for the timeout.
     */
    void readClientFrames(int qps, ClientFrames sink) throws Failure {
        try {
            for (;;) {
                byte type = in.readByte();
                if (type == PROGRESS) {
                    sink.progress(in.readLong());
                } else if (type == END) {
                    long verified = in.readLong();
                    long dataErrors = in.readLong();
                    long duplicates = in.readLong();
                    long errorCompletions = in.readLong();
                    long retransmits = in.readLong();
                    long fetchAdds = in.readLong();
                    String firstError = PeerText.printable(in.readUTF());
                    int n = in.readInt();
                    if (n != qps) {
                        throw new Failure("the client's end of the run covers " + n + " queue pairs, not " + qps);
                    }
                    long[] receives = new long[n];
                    long[] hashes = new long[n];
                    long[] cas = new long[n];
                    for (int i = 0; i < n; i++) {
                        receives[i] = in.readLong();
                        hashes[i] = in.readLong();
                        cas[i] = in.readLong();
                    }
                    sink.end(new End(verified, dataErrors, duplicates, errorCompletions, retransmits, fetchAdds,
                            firstError, receives, hashes, cas));
                    return;
                } else {
                    throw new Failure("the client sent frame type " + type + ", which is not PROGRESS or END");
                }
            }
        } catch (IOException e) {
            throw failure("read from the client", e);
        }
    }

    void sendVerdict(Verdict v) throws Failure {
        try {
            out.writeByte(VERDICT);
            out.writeLong(v.receives());
            out.writeLong(v.dataErrors());
            out.writeLong(v.orderErrors());
            out.writeLong(v.duplicates());
            out.writeLong(v.errorCompletions());
            out.writeBoolean(v.compared());
            out.writeBoolean(v.hashesMatch());
            out.writeBoolean(v.atomicsMatch());
            out.writeLong(v.retransmits());
            out.writeUTF(v.firstError());
            out.flush();
        } catch (IOException e) {
            throw failure("send the verdict", e);
        }
    }

    Verdict readVerdict() throws Failure {
        try {
            byte type = in.readByte();
            if (type != VERDICT) {
                throw new Failure("the server sent frame type " + type + ", not its verdict");
            }
            return new Verdict(in.readLong(), in.readLong(), in.readLong(), in.readLong(), in.readLong(),
                    in.readBoolean(), in.readBoolean(), in.readBoolean(), in.readLong(),
                    PeerText.printable(in.readUTF()));
        } catch (IOException e) {
            throw failure("read the server's verdict", e);
        }
    }

    /** A {@link QpEndpoint} in its byte form; a malformed one ends the exchange like a broken stream. */
    private QpEndpoint readEndpoint() throws IOException {
        byte[] raw = new byte[QpEndpoint.BYTES];
        in.readFully(raw);
        try {
            return QpEndpoint.fromBytes(raw);
        } catch (IllegalArgumentException e) {
            throw new IOException("the " + peer + " sent a bad queue pair endpoint: " + e.getMessage(), e);
        }
    }

    private Failure failure(String what, IOException e) {
        String why = e instanceof EOFException ? "the connection was closed"
                : e instanceof SocketTimeoutException ? "nothing arrived for " + timeoutText()
                : describe(e);
        return new Failure("couldn't " + what + " (" + peer + "): " + why);
    }

    private String timeoutText() {
        try {
            return socket.getSoTimeout() / 1000.0 + " s";
        } catch (IOException e) {
            return "too long";
        }
    }

    static String describe(IOException e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    @Override
    public void close() {
        closeQuietly(socket);
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }
}
