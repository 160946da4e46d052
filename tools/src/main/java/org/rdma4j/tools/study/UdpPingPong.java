// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.DatagramChannel;
import org.rdma4j.tools.text.PeerText;

/**
 * The UDP socket ping-pongs of {@code study latency}: {@code size}-byte datagrams between two connected
 * sockets ({@link DatagramChannel}), each side busy-polling a non-blocking one ({@code udp-busy},
 * the floor) or blocking in its read ({@code udp-block}). The client stamps each ping with its
 * number and checks the echo. Every wait gives up after {@link #WAIT_NS}. The timed loops allocate
 * nothing. Stateless; one call per side.
 */
final class UdpPingPong {
    static final long WAIT_NS = 30_000_000_000L;

    private UdpPingPong() {}

    /** The client: {@code warmup + iters} round trips; returns the last {@code iters} in ns. */
    static Measured client(LatencySettings s, boolean blocking, String bind, Rendezvous r) {
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
            return new Measured(rtt, -1);
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

    /**
     * One side's socket: a connected {@link DatagramChannel}, non-blocking (busy) or blocking. A blocking
     * receive has no timeout of its own: a watchdog thread closes the channel when one has waited
     * {@link #WAIT_NS}, which ends it; an interrupt ends it too.
     */
    private static final class Sock implements AutoCloseable {
        private final boolean blocking;
        private final int size;
        private final DatagramChannel channel;
        private final ByteBuffer out;
        private final ByteBuffer in;
        /** When the current blocking receive began, 0 when none is under way. */
        private volatile long waitingSince;
        private volatile boolean timedOut;
        private volatile boolean closed;

        Sock(String bind, boolean blocking, int size) {
            this.blocking = blocking;
            this.size = size;
            try {
                channel = DatagramChannel.open(StandardProtocolFamily.INET);
                channel.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
                channel.bind(new InetSocketAddress(InetAddress.getByName(bind), 0));
                channel.configureBlocking(blocking);
            } catch (IOException e) {
                throw new StudyFailure("UDP: cannot open a socket on " + bind + ": " + e.getMessage(), e);
            }
            out = ByteBuffer.allocateDirect(size);
            in = ByteBuffer.allocateDirect(size + 1);
            if (blocking) {
                Thread.ofPlatform().daemon().name("study-udp-watchdog").start(this::watch);
            }
        }

        private void watch() {
            while (!closed) {
                try {
                    Thread.sleep(250);
                } catch (InterruptedException e) {
                    return;
                }
                long since = waitingSince;
                if (since != 0 && System.nanoTime() - since > WAIT_NS) {
                    timedOut = true;
                    close();
                }
            }
        }

        String address() {
            try {
                InetSocketAddress a = (InetSocketAddress) channel.getLocalAddress();
                return a.getAddress().getHostAddress() + " " + a.getPort();
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
                channel.connect(new InetSocketAddress(InetAddress.ofLiteral(f[0]), Integer.parseInt(f[1])));
            } catch (IOException | IllegalArgumentException e) {
                throw new StudyFailure("UDP: cannot connect to the peer's socket (" + PeerText.printable(peer, 200) + "): "
                        + e.getMessage(), e);
            }
        }

        /** Marks the ping with round trip {@code i} (its first bytes, up to 4). */
        void stamp(int i) {
            for (int b = 0; b < Math.min(4, size); b++) {
                out.put(b, (byte) (i >>> (8 * b)));
            }
        }

        void verify(int i, String what) {
            for (int b = 0; b < Math.min(4, size); b++) {
                if (in.get(b) != (byte) (i >>> (8 * b))) {
                    throw new StudyFailure(what + ": the echo does not hold the ping's bytes");
                }
            }
        }

        /** Sends the last datagram received ({@code echo}, the echo side) or the stamped ping (the client). */
        void send(boolean echo) {
            if (echo) {
                for (int b = 0; b < size; b++) {
                    out.put(b, in.get(b));
                }
            }
            out.clear();
            try {
                channel.write(out);
            } catch (PortUnreachableException e) {
                throw new StudyFailure("UDP: the peer's socket is gone (ICMP port unreachable)", e);
            } catch (IOException e) {
                throw new StudyFailure("UDP: send failed: " + e.getMessage(), e);
            }
        }

        /** Waits for one datagram of {@code size} bytes. */
        void receive(String what) {
            long start = 0;
            try {
                for (int spins = 0; ; spins++) {
                    in.clear();
                    int n;
                    if (blocking) {
                        waitingSince = System.nanoTime();
                        n = channel.read(in);
                        waitingSince = 0;
                    } else {
                        n = channel.read(in);
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
            } catch (PortUnreachableException e) {
                throw new StudyFailure(what + ": the peer's socket is gone (ICMP port unreachable)", e);
            } catch (ClosedByInterruptException e) {
                throw new StudyFailure(what + ": interrupted (the other side failed)", e);
            } catch (AsynchronousCloseException e) {
                throw new StudyFailure(what + ": nothing arrived within " + WAIT_NS / 1_000_000_000L + " s"
                        + (timedOut ? "" : " (the socket was closed)"), e);
            } catch (IOException e) {
                throw new StudyFailure(what + ": receive failed: " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            closed = true;
            try {
                channel.close();
            } catch (IOException e) {
                // closing: nothing left to do
            }
        }
    }
}
