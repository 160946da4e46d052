// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.rdma4j.verbs.VerbsException;

/**
 * One thread with one selector that moves many iWARP connections: accepts on its listeners, connects
 * (bounded by a connect timeout), runs each connection's MPA setup to its end (the engine's deadlines),
 * then its FPDU streams both ways. Nothing waits without a deadline: every wait of the selector ends at
 * the earliest deadline of a connection, or after a second.
 *
 * <p>{@link #close()} ends every connection (all its work requests flushed) and stops the thread, waiting
 * at most {@link #CLOSE_WAIT_NS}. Thread safe: any thread may listen, connect, post and close.
 */
public final class IwarpAgent implements AutoCloseable {
    /** How long {@link #close()} waits for the thread. */
    public static final long CLOSE_WAIT_NS = TimeUnit.SECONDS.toNanos(5);
    /** siw's wait for a TCP connect is the kernel's; this agent's default. */
    public static final long DEFAULT_CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long IDLE_WAIT_MS = 1000;

    private final Selector selector;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<IwarpConnection> woken = new ConcurrentLinkedQueue<>();
    private final List<ConnectionDriver> drivers = new ArrayList<>();
    private final List<IwarpListener> listeners = new ArrayList<>();
    private volatile boolean closing;

    /**
     * Starts the agent's thread.
     *
     * @param name the thread's name
     * @throws IOException if no selector can be opened
     */
    public IwarpAgent(String name) throws IOException {
        selector = Selector.open();
        thread = Thread.ofPlatform().name(name).daemon().unstarted(this::run);
        thread.start();
    }

    /**
     * Listens for MPA initiators.
     *
     * @param local     the address to bind (port 0 for any)
     * @param config    the responder's choices
     * @param onRequest called on the agent thread with each connection whose MPA request has arrived
     * @return the listener
     * @throws IOException if the address cannot be bound
     */
    public IwarpListener listen(InetSocketAddress local, MpaConfig config, Consumer<IwarpConnection> onRequest)
            throws IOException {
        checkOpen();
        ServerSocketChannel server = ServerSocketChannel.open().bind(local);
        server.configureBlocking(false);
        IwarpListener l = new IwarpListener(server, Objects.requireNonNull(config, "config"),
                Objects.requireNonNull(onRequest, "onRequest"));
        command(() -> {
            try {
                server.register(selector, SelectionKey.OP_ACCEPT, l);
                listeners.add(l);
            } catch (IOException e) {
                closeQuietly(server);
            }
        });
        return l;
    }

    /**
     * Connects to an MPA responder, as {@code rdma_connect}: returns at once; the connection's
     * {@link IwarpConnection#established()} tells how the setup ended.
     *
     * @param remote           the responder's address
     * @param config           the initiator's choices
     * @param ird              RDMA Reads this side serves at once
     * @param ord              RDMA Reads this side issues at once
     * @param privateData      the request's private data
     * @param queuePair        the queue pair the connection serves
     * @param connectTimeoutNs how long the TCP connect may take
     * @return the connection, connecting
     * @throws VerbsException as {@link MpaInitiator}'s constructor (private data, IRD, ORD)
     */
    public IwarpConnection connect(InetSocketAddress remote, MpaConfig config, int ird, int ord, byte[] privateData,
                                   IwarpQp queuePair, long connectTimeoutNs) {
        checkOpen();
        Objects.requireNonNull(queuePair, "queuePair");
        String peer = String.valueOf(remote);
        MpaInitiator initiator = new MpaInitiator(config, ird, ord, privateData, peer);
        IwarpConnection conn = new IwarpConnection(this, peer, initiator, queuePair, IwarpConnection.State.CONNECTING);
        command(() -> {
            SocketChannel channel = null;
            try {
                channel = SocketChannel.open();
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ConnectionDriver d = new ConnectionDriver(conn, channel, c -> { }, connectTimeoutNs);
                d.register(channel.register(selector, SelectionKey.OP_CONNECT, d), System.nanoTime());
                drivers.add(d);
                channel.connect(remote);
                d.service(System.nanoTime());
            } catch (IOException e) {
                closeQuietly(channel);
                String why = "TCP connect to " + peer + " failed (" + e.getClass().getSimpleName() + ")";
                conn.end(why, new VerbsException(org.rdma4j.verbs.Errno.EHOSTUNREACH, why));
            }
        });
        return conn;
    }

    void wake(IwarpConnection conn) {
        woken.add(conn);
        selector.wakeup();
    }

    private void command(Runnable r) {
        commands.add(r);
        selector.wakeup();
    }

    private void checkOpen() {
        if (closing) {
            throw new IllegalStateException("the iWARP agent " + thread.getName() + " is closed");
        }
    }

    private void run() {
        try {
            while (!closing) {
                long now = System.nanoTime();
                long deadline = Long.MAX_VALUE;
                for (ConnectionDriver d : drivers) {
                    deadline = Math.min(deadline, d.deadlineNs());
                }
                long waitMs = deadline == Long.MAX_VALUE ? IDLE_WAIT_MS
                        : Math.min(IDLE_WAIT_MS, TimeUnit.NANOSECONDS.toMillis(deadline - now + 999_999));
                if (!commands.isEmpty() || !woken.isEmpty() || waitMs <= 0) {
                    selector.selectNow();
                } else {
                    selector.select(waitMs);
                }
                work(System.nanoTime());
            }
        } catch (IOException | RuntimeException e) {
            // the selector failed: end everything below
        } finally {
            shutdown();
        }
    }

    private void work(long now) {
        for (Runnable r; (r = commands.poll()) != null; ) {
            r.run();
        }
        Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
        while (keys.hasNext()) {
            SelectionKey k = keys.next();
            keys.remove();
            if (k.attachment() instanceof IwarpListener l) {
                acceptAll(l, now);
            } else if (k.attachment() instanceof ConnectionDriver d) {
                d.service(now);
            }
        }
        for (IwarpConnection c; (c = woken.poll()) != null; ) {
            for (ConnectionDriver d : drivers) {
                if (d.conn == c) {
                    d.service(now);
                }
            }
        }
        for (ConnectionDriver d : drivers) {
            if (now - d.deadlineNs() >= 0) {
                d.service(now);
            }
        }
        drivers.removeIf(ConnectionDriver::finished);
    }

    private void acceptAll(IwarpListener l, long now) {
        while (true) {
            SocketChannel s;
            try {
                s = l.server.accept();
            } catch (IOException e) {
                return;
            }
            if (s == null) {
                return;
            }
            try {
                s.configureBlocking(false);
                s.setOption(StandardSocketOptions.TCP_NODELAY, true);
                String peer = String.valueOf(s.getRemoteAddress());
                IwarpConnection conn = new IwarpConnection(this, peer, new MpaResponder(l.config, peer), null,
                        IwarpConnection.State.MPA);
                ConnectionDriver d = new ConnectionDriver(conn, s, l.onRequest, 0);
                d.register(s.register(selector, SelectionKey.OP_READ, d), now);
                drivers.add(d);
                d.service(now);
            } catch (IOException e) {
                closeQuietly(s);
            }
        }
    }

    private void shutdown() {
        for (Runnable r; (r = commands.poll()) != null; ) {
            try {
                r.run();
            } catch (RuntimeException e) {
                // ending anyway
            }
        }
        for (ConnectionDriver d : drivers) {
            d.finish("the iWARP agent " + thread.getName() + " closed", null);
        }
        drivers.clear();
        for (IwarpListener l : listeners) {
            closeQuietly(l.server);
        }
        closeQuietly(selector);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            // closing: nothing more to do with it
        }
    }

    /**
     * Ends every connection (their work requests flushed), closes the listeners and stops the thread,
     * waiting for it at most {@link #CLOSE_WAIT_NS}. Idempotent.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    @Override
    public void close() throws InterruptedException {
        closing = true;
        selector.wakeup();
        if (Thread.currentThread() != thread) {
            thread.join(TimeUnit.NANOSECONDS.toMillis(CLOSE_WAIT_NS));
        }
    }

    /** {@return whether the agent's thread has stopped} */
    public boolean stopped() {
        return !thread.isAlive();
    }
}
