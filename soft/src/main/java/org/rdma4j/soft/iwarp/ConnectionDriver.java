// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.io.IOException;
import java.net.ConnectException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * One connection's socket on its {@link IwarpAgent}'s thread, through its phases: the TCP connect
 * (active side, bounded by the connect timeout), MPA setup (the engine's bytes both ways, its deadline,
 * the program's accept or reject on the passive side), then the {@link RdmapPump}. Ends the connection on
 * any failure, closing the socket. Agent thread only.
 */
final class ConnectionDriver {
    private static final int MPA_ROUNDS = 8;

    final IwarpConnection conn;
    final SocketChannel channel;
    private final Consumer<IwarpConnection> onRequest;
    private final long connectTimeoutNs;
    private SelectionKey key;
    private long connectDeadlineNs = Long.MAX_VALUE;
    private boolean announced;
    private boolean decided;
    private RdmapPump pump;
    private boolean finished;

    ConnectionDriver(IwarpConnection conn, SocketChannel channel, Consumer<IwarpConnection> onRequest,
                     long connectTimeoutNs) {
        this.conn = conn;
        this.channel = channel;
        this.onRequest = onRequest;
        this.connectTimeoutNs = connectTimeoutNs;
    }

    void register(SelectionKey k, long nowNs) {
        key = k;
        if (conn.state == IwarpConnection.State.CONNECTING) {
            connectDeadlineNs = nowNs + connectTimeoutNs;
        }
    }

    boolean finished() {
        return finished;
    }

    long deadlineNs() {
        if (finished) {
            return Long.MAX_VALUE;
        }
        return switch (conn.state) {
            case CONNECTING -> connectDeadlineNs;
            case MPA, AWAITING_DECISION -> conn.engine.deadlineNs();
            case RTS -> pump.deadlineNs();
            case ERROR -> Long.MAX_VALUE;
        };
    }

    /** Moves the connection on as far as it goes now. */
    void service(long now) {
        if (finished) {
            return;
        }
        if (conn.abortRequested) {
            finish("the connection with " + conn.peer + " was closed by this side", null);
            return;
        }
        try {
            switch (conn.state) {
                case CONNECTING -> connect(now);
                case MPA, AWAITING_DECISION -> mpa(now);
                case RTS -> {
                    if (!pump.step(now)) {
                        finish(pump.endReason(), null);
                    }
                }
                case ERROR -> finish("ended", null);
            }
        } catch (RuntimeException e) {
            finish("the connection with " + conn.peer + " failed: " + e, null);
        }
        if (!finished && key.isValid()) {
            key.interestOps(interestOps());
        }
    }

    private int interestOps() {
        return switch (conn.state) {
            case CONNECTING -> SelectionKey.OP_CONNECT;
            case MPA -> (conn.engine.outbox().hasRemaining() ? SelectionKey.OP_WRITE : 0)
                    | (conn.engine.wantsRead() ? SelectionKey.OP_READ : 0);
            case RTS -> pump.interestOps();
            default -> 0;
        };
    }

    private void connect(long now) {
        try {
            if (channel.finishConnect()) {
                conn.state = IwarpConnection.State.MPA;
                mpa(now);
                return;
            }
        } catch (IOException e) {
            int errno = e instanceof ConnectException ? Errno.ECONNREFUSED : Errno.EHOSTUNREACH;
            String why = "TCP connect to " + conn.peer + " failed (" + e.getClass().getSimpleName() + ")";
            finish(why, new VerbsException(errno, why));
            return;
        }
        if (now - connectDeadlineNs >= 0) {
            String why = "TCP connect to " + conn.peer + ": no answer within "
                    + TimeUnit.NANOSECONDS.toMillis(connectTimeoutNs) + " ms";
            finish(why, new VerbsException(Errno.ETIMEDOUT, why));
        }
    }

    private void mpa(long now) {
        MpaEngine engine = conn.engine;
        applyDecision();
        engine.advance(now);
        for (int round = 0; round < MPA_ROUNDS && !engine.idle(); round++) {
            int moved = 0;
            try {
                if (engine.outbox().hasRemaining()) {
                    moved += channel.write(engine.outbox());
                }
                if (engine.wantsRead()) {
                    int n = channel.read(engine.inbox());
                    if (n < 0) {
                        engine.peerClosed();
                        moved++;
                    }
                    moved += Math.max(n, 0);
                }
            } catch (IOException e) {
                engine.socketFailed(e);
            }
            engine.advance(now);
            if (moved == 0) {
                break;
            }
        }
        if (engine.outbox().hasRemaining() && engine.idle()) {
            try {
                channel.write(engine.outbox());
            } catch (IOException e) {
                engine.socketFailed(e);
            }
        }
        MpaConnection established = engine.connection();
        if (established != null) {
            established(established);
        } else if (engine.failure() != null && !engine.outbox().hasRemaining()) {
            finish(engine.failure().message(), engine.failure().toException());
        } else if (engine instanceof MpaResponder r && r.rejected()) {
            String why = "MPA request from " + conn.peer + " rejected by this side";
            finish(why, new VerbsException(Errno.ECONNREFUSED, why));
        } else if (engine instanceof MpaResponder r && r.awaitingDecision() && !announced) {
            announced = true;
            conn.state = IwarpConnection.State.AWAITING_DECISION;
            onRequest.accept(conn);
        }
    }

    private void applyDecision() {
        IwarpConnection.Decision d;
        synchronized (conn) {
            d = conn.decision;
        }
        if (d == null || decided || !(conn.engine instanceof MpaResponder r) || !r.awaitingDecision()) {
            return;
        }
        decided = true;
        conn.state = IwarpConnection.State.MPA;
        if (d.accept()) {
            r.accept(d.ird(), d.ord(), d.privateData());
        } else {
            r.reject(d.privateData());
        }
    }

    private void established(MpaConnection m) {
        if (m.rtr() == MpaRtr.READ) {
            String why = "MPA with " + conn.peer + " agreed on a zero-length RDMA Read as ready-to-receive message,"
                    + " which this transport does not take yet";
            finish(why, new VerbsException(Errno.EOPNOTSUPP, why));
            return;
        }
        pump = new RdmapPump(conn, channel, m);
        conn.state = IwarpConnection.State.RTS;
        conn.established.complete(m);
        pump.start();
        if (!pump.step(System.nanoTime())) {
            finish(pump.endReason(), null);
        }
    }

    /** Closes the socket and ends the connection (flushing everything), once. */
    void finish(String why, VerbsException setupFailure) {
        if (finished) {
            return;
        }
        finished = true;
        if (key != null) {
            key.cancel();
        }
        try {
            channel.close();
        } catch (IOException e) {
            // closing: nothing more to do with it
        }
        conn.end(why, setupFailure);
    }
}
