// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;

/**
 * The UDP socket ping-pongs of {@code study latency}: {@code size}-byte datagrams between two connected
 * sockets, each side busy-polling a non-blocking {@link DatagramChannel} ({@code udp-busy}, the floor) or
 * blocking in {@link DatagramSocket#receive} ({@code udp-blocking}). The client stamps each ping with its
 * number and checks the echo. Every wait gives up after {@link #WAIT_NS}. The timed loops allocate
 * nothing. Stateless; one call per side.
 */
final class UdpPingPong {
    static final long WAIT_NS = 30_000_000_000L;

    private UdpPingPong() {}

    /** The client: {@code warmup + iters} round trips; returns the last {@code iters} in ns. */
    static long[] client(LatencySettings s, boolean blocking, String bind, Rendezvous r) {
        try (Sock sock = new Sock(bind, blocking, s.size())) {
            sock.connect(r.swap(sock.address(), "UDP: exchanging socket addresses"));
            r.swap("ready", "UDP: the echo side getting ready");
            long[] rtt = new long[s.iters()];
            int total = s.warmup() + s.iters();
            for (int i = 0; i < total; i++) {
                long t0 = System.nanoTime();
                sock.stamp(i);
                sock.send(false);
                sock.receive("UDP: pong " + i);
                long t1 = System.nanoTime();
                sock.verify(i, "UDP: pong " + i);
                int timed = i - s.warmup();
                if (timed >= 0) {
                    rtt[timed] = t1 - t0;
                }
            }
            r.swap("done", "UDP: the echo side finishing");
            return rtt;
        }
    }

    /** The echo side: answers {@code warmup + iters} pings with their own bytes. */
    static void server(LatencySettings s, boolean blocking, String bind, Rendezvous r) {
        try (Sock sock = new Sock(bind, blocking, s.size())) {
            sock.connect(r.swap(sock.address(), "UDP: exchanging socket addresses"));
            r.swap("ready", "UDP: the client getting ready");
            int total = s.warmup() + s.iters();
            for (int i = 0; i < total; i++) {
                sock.receive("UDP echo: ping " + i);
                sock.send(true);
            }
            r.swap("done", "UDP: the client finishing");
        }
    }

    /** One side's socket: a non-blocking channel (busy) or a blocking socket with a receive timeout. */
    private static final class Sock implements AutoCloseable {
        private final boolean blocking;
        private final int size;
        private final DatagramChannel channel;
        private final DatagramSocket socket;
        private final ByteBuffer out;
        private final ByteBuffer in;
        private final byte[] outBytes;
        private final byte[] inBytes;
        private final DatagramPacket outPacket;
        private final DatagramPacket inPacket;

        Sock(String bind, boolean blocking, int size) {
            this.blocking = blocking;
            this.size = size;
            try {
                InetSocketAddress local = new InetSocketAddress(InetAddress.getByName(bind), 0);
                if (blocking) {
                    channel = null;
                    socket = new DatagramSocket(local);
                    socket.setReceiveBufferSize(4 << 20);
                    socket.setSoTimeout((int) (WAIT_NS / 1_000_000L));
                    out = in = null;
                    outBytes = new byte[size];
                    inBytes = new byte[size + 1];
                    outPacket = new DatagramPacket(outBytes, size);
                    inPacket = new DatagramPacket(inBytes, inBytes.length);
                } else {
                    socket = null;
                    channel = DatagramChannel.open(StandardProtocolFamily.INET);
                    channel.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
                    channel.bind(local);
                    channel.configureBlocking(false);
                    out = ByteBuffer.allocateDirect(size);
                    in = ByteBuffer.allocateDirect(size + 1);
                    outBytes = inBytes = null;
                    outPacket = inPacket = null;
                }
            } catch (IOException e) {
                throw new StudyFailure("UDP: cannot open a socket on " + bind + ": " + e.getMessage(), e);
            }
        }

        String address() {
            InetSocketAddress a = (InetSocketAddress) (blocking ? socket.getLocalSocketAddress()
                    : localOf(channel));
            return a.getAddress().getHostAddress() + " " + a.getPort();
        }

        private static java.net.SocketAddress localOf(DatagramChannel c) {
            try {
                return c.getLocalAddress();
            } catch (IOException e) {
                throw new StudyFailure("UDP: the socket has no address: " + e.getMessage(), e);
            }
        }

        void connect(String peer) {
            String[] f = peer.split(" ");
            try {
                if (f.length != 2) {
                    throw new IllegalArgumentException("not an address and port");
                }
                InetSocketAddress to = new InetSocketAddress(InetAddress.ofLiteral(f[0]), Integer.parseInt(f[1]));
                if (blocking) {
                    socket.connect(to);
                } else {
                    channel.connect(to);
                }
            } catch (IOException | IllegalArgumentException e) {
                throw new StudyFailure("UDP: cannot connect to the peer's socket (" + PeerText.safe(peer) + "): "
                        + e.getMessage(), e);
            }
        }

        void stamp(int i) {
            if (blocking) {
                for (int b = 0; b < Math.min(4, size); b++) {
                    outBytes[b] = (byte) (i >>> (8 * b));
                }
            } else {
                for (int b = 0; b < Math.min(4, size); b++) {
                    out.put(b, (byte) (i >>> (8 * b)));
                }
            }
        }

        void verify(int i, String what) {
            for (int b = 0; b < Math.min(4, size); b++) {
                byte got = blocking ? inBytes[b] : in.get(b);
                if (got != (byte) (i >>> (8 * b))) {
                    throw new StudyFailure(what + ": the echo does not hold the ping's bytes");
                }
            }
        }

        /** Sends the last datagram received ({@code echo}, the echo side) or the stamped ping (the client). */
        void send(boolean echo) {
            try {
                if (blocking) {
                    if (echo) {
                        System.arraycopy(inBytes, 0, outBytes, 0, size);
                    }
                    socket.send(outPacket);
                } else {
                    if (echo) {
                        for (int b = 0; b < size; b++) {
                            out.put(b, in.get(b));
                        }
                    }
                    out.clear();
                    channel.write(out);
                }
            } catch (IOException e) {
                throw new StudyFailure("UDP: send failed: " + e.getMessage(), e);
            }
        }

        /** Waits for one datagram of {@code size} bytes. */
        void receive(String what) {
            try {
                if (blocking) {
                    inPacket.setLength(inBytes.length);
                    socket.receive(inPacket);
                    if (inPacket.getLength() != size) {
                        throw new StudyFailure(what + ": a datagram of " + inPacket.getLength() + " bytes, not " + size);
                    }
                    return;
                }
                long start = 0;
                for (int spins = 0; ; spins++) {
                    in.clear();
                    int n;
                    try {
                        n = channel.read(in);
                    } catch (PortUnreachableException e) {
                        n = 0; // an ICMP error for an earlier datagram: not this one
                    }
                    if (n > 0) {
                        if (n != size) {
                            throw new StudyFailure(what + ": a datagram of " + n + " bytes, not " + size);
                        }
                        return;
                    }
                    Thread.onSpinWait();
                    if ((spins & 1023) == 1023) {
                        long now = System.nanoTime();
                        if (start == 0) {
                            start = now;
                        } else if (now - start > WAIT_NS) {
                            throw new StudyFailure(what + ": nothing arrived within " + WAIT_NS / 1_000_000_000L + " s");
                        }
                        if (Thread.currentThread().isInterrupted()) {
                            throw new StudyFailure(what + ": interrupted (the other side failed)");
                        }
                    }
                }
            } catch (SocketTimeoutException e) {
                throw new StudyFailure(what + ": nothing arrived within " + WAIT_NS / 1_000_000_000L + " s", e);
            } catch (IOException e) {
                throw new StudyFailure(what + ": receive failed: " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            try {
                if (blocking) {
                    socket.close();
                } else {
                    channel.close();
                }
            } catch (IOException e) {
                // closing: nothing left to do
            }
        }
    }
}
