package org.rdma4j.tools.cmutils;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmEventType;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.tools.device.CmDevices;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.tools.pingpong.CNumber;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.IdleStrategy;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j cmatose}: rdmacm-utils' {@code ucmatose} (librdmacm/examples/cmatose.c) on rdma4j's
 * {@link CmEventChannel} and {@link CmId}. Many connections at once, all driven by one event channel:
 * the client resolves and connects {@code -c} ids; the server accepts as many, each with {@code -C}
 * receives posted first. Then the server SENDs {@code -C} messages of {@code -S} bytes on every
 * connection and waits for their completions, the client receives them and SENDs as many back, the
 * server receives those and disconnects every connection; both wait for every DISCONNECTED. Lines and
 * the final {@code return status N} (the exit code) are cmatose's.
 */
@Command(name = "cmatose", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Many connections through one connection-manager event channel, like rdmacm-utils' "
                + "ucmatose: -c connections, -C messages of -S bytes sent each way on every one, then "
                + "disconnected by the server.",
            "Server without -s (listens on -b or every address), client with -s. The device is the one "
                + "whose GID is -b (or that reaches -s); with none, a soft device over RoCEv2/UDP is made on "
                + "-b (--bind ADDRESS chooses it explicitly).",
            "Exit code: cmatose's return status (0, or the failing event's status or errno; 255 for -1), 2 "
                + "on a bad flag."})
public final class CmatoseCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    DeviceOptions devices;

    @Option(names = "-s", order = 1, paramLabel = "server_address", description = "connect to this server (client)")
    String dstAddr;

    @Option(names = "-b", order = 2, paramLabel = "bind_address", description = "the local address")
    String srcAddr;

    @Option(names = "-c", order = 3, paramLabel = "connections", converter = CNumber.class,
            description = "connections (default 1)")
    int connections = 1;

    @Option(names = "-C", order = 4, paramLabel = "message_count", converter = CNumber.class,
            description = "messages each way per connection (default 10)")
    int messageCount = 10;

    @Option(names = "-S", order = 5, paramLabel = "message_size", converter = CNumber.class,
            description = "bytes per message (default 100; 0: no messages)")
    int messageSize = 100;

    @Option(names = "-p", order = 6, paramLabel = "port_number", converter = CNumber.class,
            description = "the port (default " + RdmaServerCommand.DEFAULT_PORT + ")")
    int port = RdmaServerCommand.DEFAULT_PORT;

    @Option(names = "-a", order = 7, paramLabel = "ack_timeout", converter = CNumber.class,
            description = "the QPs' ACK timeout exponent (RDMA_OPTION_ID_ACK_TIMEOUT)")
    Integer ackTimeout;

    @Option(names = "-P", order = 8, paramLabel = "port_space", description = "tcp (ib: not supported)")
    String portSpace = "tcp";

    @Option(names = "-t", order = 9, paramLabel = "type_of_service", hidden = true)
    String tos;

    @Option(names = "-m", order = 10, hidden = true)
    boolean migrate;

    @Option(names = "-v", order = 11, description = "rdma4j: say \"listening on ADDRESS\" once the server listens")
    boolean verbose;

    @Option(names = "--timeout", order = 12, paramLabel = "SECONDS", converter = CNumber.class,
            description = "rdma4j: give up when no connection event or completion comes for SECONDS (default "
                    + "30; cmatose waits forever)")
    int timeoutSeconds = 30;

    private PrintWriter out;
    private Node[] nodes;
    private int connIndex;
    private int connectsLeft;
    private int disconnectsLeft;
    private CmEventChannel channel;
    private Arena arena;
    private InetSocketAddress src;
    private InetSocketAddress dst;
    private final WorkCompletion[] wcs = WorkCompletion.array(8);

    /** One connection (cmatose.c's struct cmatest_node). */
    private static final class Node {
        final int id;
        CmId cmId;
        boolean connected;
        ProtectionDomain pd;
        CompletionQueue sendCq;
        CompletionQueue recvCq;
        MemoryRegion mr;
        MemorySegment mem;

        Node(int id) {
            this.id = id;
        }
    }

    @Override
    public Integer call() throws Exception {
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
            nodes = new Node[connections];
            for (int i = 0; i < connections; i++) {
                nodes[i] = new Node(i);
                if (dstIp != null) {
                    nodes[i].cmId = channel.createId(PortSpace.TCP);
                }
            }
            if (dstIp != null) {
                src = srcIp == null ? null : new InetSocketAddress(srcIp, 0);
                dst = new InetSocketAddress(dstIp, port);
                ret = runClient();
            } else {
                src = new InetSocketAddress(srcIp != null ? srcIp : InetAddress.getByName("0.0.0.0"), port);
                ret = runServer();
            }
            out.println("test complete");
            destroyNodes();
        } catch (VerbsException e) {
            CmUtil.perror(err, "cmatose", e);
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
        if (port < 0 || port > 65535) {
            throw new ParameterException(spec.commandLine(), "-p " + port + " is outside 0..65535");
        }
        if (!"tcp".equalsIgnoreCase(portSpace)) {
            throw new ParameterException(spec.commandLine(), "-P " + portSpace + ": only tcp is supported");
        }
        if (ackTimeout != null && (ackTimeout < 0 || ackTimeout > 31)) {
            throw new ParameterException(spec.commandLine(), "-a " + ackTimeout + " is outside 0..31");
        }
        if (tos != null || migrate) {
            throw new ParameterException(spec.commandLine(), (migrate ? "-m (rdma_migrate_id)" : "-t (type of service)")
                    + " is not supported by rdma4j's cm yet");
        }
    }

    // ------------------------------------------------------------------ the two sides

    private int runServer() throws InterruptedException {
        out.println("cmatose: starting server");
        CmId listenId = channel.createId(PortSpace.TCP);
        try {
            try {
                listenId.bindAddr(src);
            } catch (VerbsException e) {
                perror("cmatose: bind address failed", e);
                return e.errno();
            }
            try {
                listenId.listen(0);
            } catch (VerbsException e) {
                perror("cmatose: failure trying to listen", e);
                return e.errno();
            }
            if (verbose) {
                out.println("listening on " + listenId.localAddress());
                out.flush();
            }
            int ret = connectEvents();
            if (ret != 0) {
                return ret;
            }
            if (messageCount > 0) {
                out.println("initiating data transfers");
                for (Node n : nodes) {
                    postSends(n);
                }
                out.println("completing sends");
                ret = pollCqs(true);
                if (ret != 0) {
                    return ret;
                }
                out.println("receiving data transfers");
                ret = pollCqs(false);
                if (ret != 0) {
                    return ret;
                }
                out.println("data transfers complete");
            }
            out.println("cmatose: disconnecting");
            for (Node n : nodes) {
                if (n.connected) {
                    n.connected = false;
                    n.cmId.disconnect();
                }
            }
            ret = disconnectEvents();
            out.println("disconnected");
            return ret;
        } finally {
            listenId.close();
        }
    }

    private int runClient() throws InterruptedException {
        out.println("cmatose: starting client");
        out.println("cmatose: connecting");
        for (Node n : nodes) {
            try {
                n.cmId.resolveAddr(src, dst, 2000);
            } catch (VerbsException e) {
                perror("cmatose: failure getting addr", e);
                connectsLeft--;
                return e.errno();
            }
        }
        int ret = connectEvents();
        if (ret == 0 && messageCount > 0) {
            out.println("receiving data transfers");
            ret = pollCqs(false);
            if (ret == 0) {
                out.println("sending replies");
                for (Node n : nodes) {
                    postSends(n);
                }
                out.println("data transfers complete");
            }
        }
        int ret2 = disconnectEvents();
        return ret2 != 0 ? ret2 : ret;
    }

    // ------------------------------------------------------------------ events

    private int connectEvents() throws InterruptedException {
        int ret = 0;
        while (connectsLeft > 0 && ret == 0) {
            ret = nextEvent("connect");
        }
        return ret;
    }

    private int disconnectEvents() throws InterruptedException {
        int ret = 0;
        while (disconnectsLeft > 0 && ret == 0) {
            ret = nextEvent("disconnect");
        }
        return ret;
    }

    private int nextEvent(String phase) throws InterruptedException {
        CmEvent e = channel.getEvent(timeoutSeconds, TimeUnit.SECONDS);
        if (e == null) {
            out.println("cmatose: no event within " + timeoutSeconds + " s in " + phase + " events ("
                    + (phase.equals("connect") ? connectsLeft + " connections" : disconnectsLeft + " disconnects")
                    + " left)");
            return Errno.ETIMEDOUT;
        }
        try {
            return handle(e);
        } finally {
            e.ack();
        }
    }

    private int handle(CmEvent e) throws InterruptedException {
        CmEventType t = e.type();
        switch (t) {
            case ADDR_RESOLVED -> {
                return addrHandler(node(e.id()));
            }
            case ROUTE_RESOLVED -> {
                return routeHandler(node(e.id()));
            }
            case CONNECT_REQUEST -> {
                return connectHandler(e.id());
            }
            case ESTABLISHED -> {
                Node n = node(e.id());
                if (n != null) {
                    n.connected = true;
                }
                connectsLeft--;
                disconnectsLeft++;
                return 0;
            }
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED -> {
                out.println("cmatose: event: RDMA_CM_EVENT_" + t.name() + ", error: " + e.status());
                connectsLeft--;
                return e.status();
            }
            case DISCONNECTED -> {
                try {
                    e.id().disconnect(); // answers the peer's DREQ; after our own DREQ there is nothing to do
                } catch (VerbsException ignored) {
                    // cmatose ignores rdma_disconnect's result here too
                }
                disconnectsLeft--;
                return 0;
            }
            default -> {
                return 0; // DEVICE_REMOVAL: cleaned up after the test, as cmatose does
            }
        }
    }

    private Node node(CmId id) {
        for (Node n : nodes) {
            if (n.cmId == id) {
                return n;
            }
        }
        return null;
    }

    private int addrHandler(Node n) {
        if (ackTimeout != null) {
            n.cmId.setAckTimeout(ackTimeout);
        }
        try {
            n.cmId.resolveRoute(2000);
            return 0;
        } catch (VerbsException e) {
            perror("cmatose: resolve route failed", e);
            connectsLeft--;
            return e.errno();
        }
    }

    private int routeHandler(Node n) {
        String step = "cmatose: unable to create QP";
        try {
            initNode(n);
            postRecvs(n);
            step = "cmatose: failure connecting";
            n.cmId.connect(new ConnParam().responderResources(1).initiatorDepth(1).retryCount(5));
            return 0;
        } catch (VerbsException e) {
            perror(step, e);
            connectsLeft--;
            return e.errno();
        }
    }

    private int connectHandler(CmId id) {
        if (connIndex == connections) {
            out.println("cmatose: failing connection request");
            id.reject(null);
            return -Errno.ENOMEM;
        }
        Node n = nodes[connIndex++];
        n.cmId = id;
        String step = "cmatose: unable to create QP";
        try {
            initNode(n);
            if (ackTimeout != null) {
                id.setAckTimeout(ackTimeout);
            }
            postRecvs(n);
            step = "cmatose: failure accepting";
            id.accept(new ConnParam());
            return 0;
        } catch (VerbsException e) {
            perror(step, e);
            n.cmId = null;
            connectsLeft--;
            out.println("cmatose: failing connection request");
            try {
                id.reject(null);
            } catch (VerbsException ignored) {
                // the id is gone already
            }
            id.close();
            return e.errno();
        }
    }

    // ------------------------------------------------------------------ verbs

    private void initNode(Node n) {
        Context ctx = n.cmId.context();
        n.pd = ctx.allocPd();
        int cqe = messageCount > 0 ? messageCount : 1;
        n.sendCq = ctx.createCq(cqe);
        n.recvCq = ctx.createCq(cqe);
        QpInitAttr attr = new QpInitAttr(QpType.RC, n.sendCq, n.recvCq).cap(new QpCap(cqe, cqe, 1, 1, 0))
                .sqSigAll(true);
        n.cmId.createQp(n.pd, attr);
        if (messageCount > 0) {
            n.mem = arena.allocate(messageSize, 64);
            n.mr = n.pd.regMr(n.mem, Access.LOCAL_WRITE);
        }
    }

    private void postRecvs(Node n) {
        if (messageCount == 0) {
            return;
        }
        RecvWorkRequest wr = new RecvWorkRequest().wrId(n.id).sge(n.mr, 0, messageSize);
        for (int i = 0; i < messageCount; i++) {
            n.cmId.qp().postRecv(wr);
        }
    }

    private void postSends(Node n) {
        if (!n.connected || messageCount == 0) {
            return;
        }
        SendWorkRequest wr = new SendWorkRequest().wrId(n.id).opcode(WrOpcode.SEND).flags(0).sge(n.mr, 0, messageSize);
        for (int i = 0; i < messageCount; i++) {
            n.cmId.qp().postSend(wr);
        }
    }

    /**
     * Waits for {@code -C} completions on every connected node's send or receive CQ. Unlike cmatose,
     * which spins without a bound and ignores the status, a wait is bounded by --timeout and a failed
     * completion ends the test with EIO.
     */
    private int pollCqs(boolean send) {
        IdleStrategy idle = IdleStrategy.backoff();
        long bound = TimeUnit.SECONDS.toNanos(timeoutSeconds);
        for (Node n : nodes) {
            if (!n.connected) {
                continue;
            }
            CompletionQueue cq = send ? n.sendCq : n.recvCq;
            for (int done = 0; done < messageCount; ) {
                int got = cq.poll(wcs, Math.min(wcs.length, messageCount - done), idle, bound);
                if (got == 0) {
                    out.println("cmatose: connection " + n.id + ": " + done + " of " + messageCount + " "
                            + (send ? "send" : "receive") + " completions within " + timeoutSeconds + " s");
                    return Errno.ETIMEDOUT;
                }
                for (int i = 0; i < got; i++) {
                    if (!wcs[i].isSuccess()) {
                        out.println("cmatose: connection " + n.id + ": completion with status " + wcs[i].status());
                        return Errno.EIO;
                    }
                }
                done += got;
            }
        }
        return 0;
    }

    private void perror(String what, VerbsException e) {
        out.println(what + ": " + CmUtil.strerror(e.errno()) + " (" + e.getMessage() + ")");
    }

    private void destroyNodes() {
        if (nodes == null) {
            return;
        }
        for (Node n : nodes) {
            if (n == null || n.cmId == null) {
                continue;
            }
            try {
                if (n.cmId.qp() != null) {
                    n.cmId.destroyQp();
                }
                if (n.sendCq != null) {
                    n.sendCq.close();
                }
                if (n.recvCq != null) {
                    n.recvCq.close();
                }
                if (n.mr != null) {
                    n.mr.close();
                }
                if (n.pd != null) {
                    n.pd.close();
                }
            } catch (VerbsException e) {
                out.println("cmatose: cleaning up connection " + n.id + ": " + e.getMessage());
            } finally {
                n.cmId.close(); // after every device resource, as cmatose destroys its ids last
            }
        }
    }
}
