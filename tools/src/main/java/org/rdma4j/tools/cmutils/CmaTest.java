// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cmutils;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.tools.cli.CmEvents;
import org.rdma4j.tools.device.CmDevices;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.IdleStrategy;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * What rdmacm-utils' cmatose and udaddy share (their {@code struct cmatest} and its nodes): the common
 * options, a device for the addresses, one event channel for every id, the client that resolves
 * {@code -c} ids and the server that listens, the connection events dispatched to the program's
 * handlers, bounded completion polling, and the end ({@code test complete}, {@code return status N}).
 * A subclass is one program: its port space, its node (what each id owns), its handlers and its data
 * transfers.
 *
 * @param <N> the program's node
 */
abstract class CmaTest<N extends CmaTest.Node> implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    DeviceOptions devices;

    @Option(names = "-s", order = 1, paramLabel = "server_address", description = "the server (client)")
    String dstAddr;

    @Option(names = "-b", order = 2, paramLabel = "bind_address", description = "the local address")
    String srcAddr;

    @Option(names = "-c", order = 3, paramLabel = "connections", converter = CNumber.class,
            description = "connections, one id each (default 1)")
    int connections = 1;

    @Option(names = "-C", order = 4, paramLabel = "message_count", converter = CNumber.class,
            description = "messages each way per connection (default 10)")
    int messageCount = 10;

    @Option(names = "-S", order = 5, paramLabel = "message_size", converter = CNumber.class,
            description = "bytes per message (default 100; 0: no messages)")
    int messageSize = 100;

    @Option(names = "-v", order = 20, description = "rdma4j: say \"listening on ADDRESS\" once the server listens")
    boolean verbose;

    @Option(names = "--timeout", order = 21, paramLabel = "SECONDS", converter = CNumber.class,
            description = "rdma4j: give up when no connection event or completion comes for SECONDS (default "
                    + "30; the C programs wait forever)")
    int timeoutSeconds = 30;

    PrintWriter out;
    N[] nodes;
    int connIndex;
    int connectsLeft;
    CmEventChannel channel;
    Arena arena;
    InetSocketAddress src;
    InetSocketAddress dst;
    final WorkCompletion[] wcs = WorkCompletion.array(8);

    /** One id and what it owns (the C programs' {@code struct cmatest_node}). */
    static class Node {
        final int id;
        CmId cmId;
        boolean connected;

        Node(int id) {
            this.id = id;
        }
    }

    /** {@return the program's name, the prefix of its lines} */
    abstract String name();

    abstract PortSpace portSpace();

    /** {@return the port the server listens on and the client connects to} */
    abstract int port();

    /** The program's own checks of its options (ParameterException). */
    abstract void checkOwnOptions();

    abstract N[] newNodes(int n);

    /** The server's work once it listens (the listener closes after it). */
    abstract int serve() throws InterruptedException;

    abstract int runClient() throws InterruptedException;

    /** ADDR_RESOLVED of the client's node: resolves the route. */
    int addrHandler(N n) {
        try {
            n.cmId.resolveRoute(2000);
            return 0;
        } catch (VerbsException e) {
            perror(name() + ": resolve route failed", e);
            connectsLeft--;
            return e.errno();
        }
    }

    /** ROUTE_RESOLVED of the client's node. */
    abstract int routeHandler(N n);

    /** CONNECT_REQUEST at the server, given the next free node (its {@code cmId} is {@code id}). */
    abstract int connectHandler(N n, CmId id);

    /** ESTABLISHED of a node (for the server's, {@code n} is null when the id is not the test's). */
    abstract int established(N n, CmEvent e);

    /** DISCONNECTED of {@code id}: by default nothing. */
    int disconnected(CmId id) {
        return 0;
    }

    /** Destroys what the node made on its device (not the id); says so on failure. */
    abstract void destroyResources(N n);

    @Override
    public final Integer call() throws Exception {
        out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        checkOptions();
        if (messageSize == 0) {
            messageCount = 0;
        }
        InetAddress srcIp;
        InetAddress dstIp;
        try {
            srcIp = srcAddr == null ? null : InetAddress.getByName(srcAddr);
            dstIp = dstAddr == null ? null : InetAddress.getByName(dstAddr);
        } catch (UnknownHostException e) {
            out.println("getaddrinfo error: Name or service not known");
            out.flush();
            return -2; // EAI_NONAME, as get_rdma_addr returns it
        }
        Device made = null;
        int ret;
        try {
            made = CmDevices.softDeviceFor(devices, srcIp != null ? srcIp : devices.bindAddress());
            if (srcIp == null && devices.bindAddress() != null) {
                srcIp = devices.bindAddress(); // the --bind device is the one to use
            }
            connectsLeft = connections;
            channel = new CmEventChannel();
            arena = Arena.ofShared();
            nodes = newNodes(connections);
            if (dstIp != null) {
                for (N n : nodes) {
                    n.cmId = channel.createId(portSpace());
                }
                src = srcIp == null ? null : new InetSocketAddress(srcIp, 0);
                dst = new InetSocketAddress(dstIp, port());
                ret = runClient();
            } else {
                src = new InetSocketAddress(srcIp != null ? srcIp : InetAddress.getByName("0.0.0.0"), port());
                ret = runServer();
            }
            out.println("test complete");
            destroyNodes();
        } catch (VerbsException e) {
            CmUtil.perror(err, name(), e);
            ret = e.errno();
            destroyNodes();
        } finally {
            if (channel != null) {
                channel.close();
            }
            if (arena != null) {
                arena.close();
            }
            CmUtil.release(devices, made, err, false);
        }
        out.println("return status " + ret);
        out.flush();
        err.flush();
        return ret;
    }

    private void checkOptions() {
        if (connections < 1 || messageCount < 0 || messageSize < 0 || timeoutSeconds < 1) {
            throw new ParameterException(spec.commandLine(), connections < 1 ? "-c must be at least 1"
                    : timeoutSeconds < 1 ? "--timeout must be at least 1 second" : "-C and -S must be 0 or more");
        }
        if (port() < 0 || port() > 65535) {
            throw new ParameterException(spec.commandLine(), "-p " + port() + " is outside 0..65535");
        }
        checkOwnOptions();
    }

    /** The server: a listener bound to {@link #src}, then {@link #serve()}; the errno if it cannot listen. */
    private int runServer() throws InterruptedException {
        out.println(name() + ": starting server");
        CmId listenId = channel.createId(portSpace());
        try {
            try {
                listenId.bindAddr(src);
            } catch (VerbsException e) {
                perror(name() + ": bind address failed", e);
                return e.errno();
            }
            try {
                listenId.listen(0);
            } catch (VerbsException e) {
                perror(name() + ": failure trying to listen", e);
                return e.errno();
            }
            if (verbose) {
                out.println("listening on " + listenId.localAddress());
                out.flush();
            }
            return serve();
        } finally {
            listenId.close();
        }
    }

    /** The client's start: every node resolves {@link #dst}, then the connection events until all are in. */
    final int connectAll() throws InterruptedException {
        out.println(name() + ": starting client");
        out.println(name() + ": connecting");
        for (N n : nodes) {
            try {
                n.cmId.resolveAddr(src, dst, 2000);
            } catch (VerbsException e) {
                perror(name() + ": failure getting addr", e);
                connectsLeft--;
                return e.errno();
            }
        }
        return connectEvents();
    }

    final int connectEvents() throws InterruptedException {
        int ret = 0;
        while (connectsLeft > 0 && ret == 0) {
            ret = nextEvent("connect", connectsLeft + " connections");
        }
        return ret;
    }

    /** The next event, handled, or ETIMEDOUT after --timeout with nothing ({@code left}: what was still awaited). */
    final int nextEvent(String phase, String left) throws InterruptedException {
        return CmEvents.next(channel::getEvent, timeoutSeconds, TimeUnit.SECONDS, this::handle, () -> {
            out.println(name() + ": no event within " + timeoutSeconds + " s in " + phase + " events (" + left
                    + " left)");
            return Errno.ETIMEDOUT;
        });
    }

    private int handle(CmEvent e) {
        CmEventType t = e.type();
        return switch (t) {
            case ADDR_RESOLVED -> addrHandler(node(e.id()));
            case ROUTE_RESOLVED -> routeHandler(node(e.id()));
            case CONNECT_REQUEST -> {
                N n = takeNode(e.id());
                yield n == null ? -Errno.ENOMEM : connectHandler(n, e.id());
            }
            case ESTABLISHED -> established(node(e.id()), e);
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED -> {
                CmEvents.printError(out, name(), e);
                connectsLeft--;
                yield e.status();
            }
            case DISCONNECTED -> disconnected(e.id());
            default -> 0; // DEVICE_REMOVAL: cleaned up after the test, as the C programs do
        };
    }

    /** The node of {@code id}, or null. */
    final N node(CmId id) {
        for (N n : nodes) {
            if (n.cmId == id) {
                return n;
            }
        }
        return null;
    }

    /** The next node for a CONNECT_REQUEST, or null after rejecting it (all {@code -c} taken). */
    private N takeNode(CmId id) {
        if (connIndex == connections) {
            out.println(name() + ": failing connection request");
            id.reject(null);
            return null;
        }
        N n = nodes[connIndex++];
        n.cmId = id;
        return n;
    }

    /**
     * Waits for {@code -C} completions of node {@code n} on {@code cq}, calling {@code first} with the
     * first batch (null: nothing). Unlike the C programs, which spin without a bound and ignore the
     * status, the wait is bounded by --timeout and a failed completion ends the test with EIO.
     */
    final int pollNode(N n, CompletionQueue cq, String what, java.util.function.ToIntFunction<WorkCompletion> first) {
        IdleStrategy idle = IdleStrategy.backoff();
        long bound = TimeUnit.SECONDS.toNanos(timeoutSeconds);
        for (int done = 0; done < messageCount; ) {
            int got = cq.poll(wcs, Math.min(wcs.length, messageCount - done), idle, bound);
            if (got == 0) {
                out.println(name() + ": connection " + n.id + ": " + done + " of " + messageCount + " " + what
                        + " within " + timeoutSeconds + " s");
                return Errno.ETIMEDOUT;
            }
            for (int i = 0; i < got; i++) {
                if (!wcs[i].isSuccess()) {
                    out.println(name() + ": connection " + n.id + ": completion with status " + wcs[i].status());
                    return Errno.EIO;
                }
            }
            if (done == 0 && first != null) {
                int ret = first.applyAsInt(wcs[0]);
                if (ret != 0) {
                    return ret;
                }
            }
            done += got;
        }
        return 0;
    }

    final void perror(String what, VerbsException e) {
        out.println(what + ": " + CmUtil.strerror(e.errno()) + " (" + e.getMessage() + ")");
    }

    private void destroyNodes() {
        if (nodes == null) {
            return;
        }
        for (N n : nodes) {
            if (n != null && n.cmId != null) {
                destroyResources(n);
                n.cmId.close(); // after every device resource, as the C programs destroy their ids last
            }
        }
    }
}
