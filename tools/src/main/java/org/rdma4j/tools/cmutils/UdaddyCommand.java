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
import org.rdma4j.verbs.AddressHandle;
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
import org.rdma4j.verbs.SendFlag;
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
 * {@code rdma4j udaddy}: rdmacm-utils' {@code udaddy} (librdmacm/examples/udaddy.c) on rdma4j's UD
 * connection-manager ids ({@link PortSpace#UDP}: service id resolution, SIDR). The client resolves
 * {@code -c} ids and connects them (a SIDR_REQ each); the server, on each CONNECT_REQUEST, creates the
 * id's UD QP, posts {@code -C} receives and accepts (a SIDR_REP with its QPN and Q_Key). The client
 * makes an address handle from each ESTABLISHED event's UD parameters and sends {@code -C} datagrams
 * of {@code -S} bytes (SEND with immediate: its own QPN); the server receives them, answers through an
 * address handle made from the first receive's completion and GRH ({@code ibv_create_ah_from_wc}) to
 * the QPN of the immediate, and the client receives the replies. Lines and the final
 * {@code return status N} (the exit code) are udaddy's.
 */
@Command(name = "udaddy", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"UD datagrams to peers found through the connection manager (SIDR), like rdmacm-utils' "
                + "udaddy: -c ids, -C datagrams of -S bytes from the client to the server and as many back.",
            "Server without -s (listens on -b or every address), client with -s. The device is the one "
                + "whose GID is -b (or that reaches -s); with none, a soft device over RoCEv2/UDP is made on "
                + "-b (--bind ADDRESS chooses it explicitly).",
            "-p is the port (udaddy's is always 7174 and its -p, kept for old scripts, a port space).",
            "Exit code: udaddy's return status (0, or the failing event's status or errno), 2 on a bad flag."})
public final class UdaddyCommand implements Callable<Integer> {
    /** udaddy's port, fixed in udaddy.c. */
    static final int DEFAULT_PORT = 7174;
    /** Bytes of the GRH area ahead of every UD receive. */
    private static final int GRH = 40;

    @Spec
    CommandSpec spec;

    @Mixin
    DeviceOptions devices;

    @Option(names = "-s", order = 1, paramLabel = "server_address", description = "resolve this server (client)")
    String dstAddr;

    @Option(names = "-b", order = 2, paramLabel = "bind_address", description = "the local address")
    String srcAddr;

    @Option(names = "-c", order = 3, paramLabel = "connections", converter = CNumber.class,
            description = "ids (default 1)")
    int connections = 1;

    @Option(names = "-C", order = 4, paramLabel = "message_count", converter = CNumber.class,
            description = "datagrams each way per id (default 10)")
    int messageCount = 10;

    @Option(names = "-S", order = 5, paramLabel = "message_size", converter = CNumber.class,
            description = "bytes per datagram, at most the port's active MTU (default 100; 0: no datagrams)")
    int messageSize = 100;

    @Option(names = "-p", order = 6, paramLabel = "port_number", converter = CNumber.class,
            description = "the port (default " + DEFAULT_PORT + ", udaddy's)")
    int port = DEFAULT_PORT;

    @Option(names = "-P", order = 7, paramLabel = "port_space", description = "udp (ipoib: not supported)")
    String portSpace = "udp";

    @Option(names = "-f", order = 8, paramLabel = "address_format",
            description = "name or ip (both taken as a name or a numeric address); gid: not supported")
    String addressFormat;

    @Option(names = "-t", order = 9, paramLabel = "type_of_service", hidden = true)
    String tos;

    @Option(names = "-v", order = 10, description = "rdma4j: say \"listening on ADDRESS\" once the server listens")
    boolean verbose;

    @Option(names = "--timeout", order = 11, paramLabel = "SECONDS", converter = CNumber.class,
            description = "rdma4j: give up when no connection event or completion comes for SECONDS (default "
                    + "30; udaddy waits forever)")
    int timeoutSeconds = 30;

    private PrintWriter out;
    private Node[] nodes;
    private int connIndex;
    private int connectsLeft;
    private CmEventChannel channel;
    private Arena arena;
    private InetSocketAddress src;
    private InetSocketAddress dst;
    private final WorkCompletion[] wcs = WorkCompletion.array(8);

    /** One id (udaddy.c's struct cmatest_node). */
    private static final class Node {
        final int id;
        CmId cmId;
        boolean connected;
        ProtectionDomain pd;
        CompletionQueue cq;
        MemoryRegion mr;
        MemorySegment mem;
        AddressHandle ah;
        int remoteQpn;
        int remoteQkey;

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
                    nodes[i].cmId = channel.createId(PortSpace.UDP);
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
            CmUtil.perror(err, "udaddy", e);
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
        if (!portSpace.regionMatches(true, 0, "udp", 0, 3)) {
            throw new ParameterException(spec.commandLine(), "-P " + portSpace + ": only udp is supported");
        }
        if (addressFormat != null && !addressFormat.regionMatches(true, 0, "name", 0, 4)
                && !addressFormat.regionMatches(true, 0, "ip", 0, 2)) {
            throw new ParameterException(spec.commandLine(), "-f " + addressFormat
                    + ": only name and ip are supported (AF_IB addresses are not)");
        }
        if (tos != null) {
            throw new ParameterException(spec.commandLine(), "-t (type of service) is not supported by rdma4j's cm yet");
        }
    }

    // ------------------------------------------------------------------ the two sides

    private int runServer() throws InterruptedException {
        out.println("udaddy: starting server");
        CmId listenId = channel.createId(PortSpace.UDP);
        try {
            try {
                listenId.bindAddr(src);
            } catch (VerbsException e) {
                perror("udaddy: bind address failed", e);
                return e.errno();
            }
            try {
                listenId.listen(0);
            } catch (VerbsException e) {
                perror("udaddy: failure trying to listen", e);
                return e.errno();
            }
            if (verbose) {
                out.println("listening on " + listenId.localAddress());
                out.flush();
            }
            int ret = connectEvents();
            if (ret != 0) {
                return ret; // udaddy goes on to wait for datagrams that cannot come
            }
            if (messageCount > 0) {
                out.println("receiving data transfers");
                ret = pollCqs();
                if (ret != 0) {
                    return ret;
                }
                out.println("sending replies");
                for (Node n : nodes) {
                    postSends(n, SendFlag.SIGNALED);
                }
                ret = pollCqs();
                if (ret != 0) {
                    return ret;
                }
                out.println("data transfers complete");
            }
            return 0;
        } finally {
            listenId.close();
        }
    }

    private int runClient() throws InterruptedException {
        out.println("udaddy: starting client");
        out.println("udaddy: connecting");
        for (Node n : nodes) {
            try {
                n.cmId.resolveAddr(src, dst, 2000);
            } catch (VerbsException e) {
                perror("udaddy: failure getting addr", e);
                connectsLeft--;
                return e.errno();
            }
        }
        int ret = connectEvents();
        if (ret == 0 && messageCount > 0) {
            out.println("initiating data transfers");
            for (Node n : nodes) {
                postSends(n, 0);
            }
            out.println("receiving data transfers");
            ret = pollCqs();
            if (ret == 0) {
                out.println("data transfers complete");
            }
        }
        return ret;
    }

    // ------------------------------------------------------------------ events

    private int connectEvents() throws InterruptedException {
        int ret = 0;
        while (connectsLeft > 0 && ret == 0) {
            CmEvent e = channel.getEvent(timeoutSeconds, TimeUnit.SECONDS);
            if (e == null) {
                out.println("udaddy: no event within " + timeoutSeconds + " s in connect events (" + connectsLeft
                        + " connections left)");
                return Errno.ETIMEDOUT;
            }
            try {
                ret = handle(e);
            } finally {
                e.ack();
            }
        }
        return ret;
    }

    private int handle(CmEvent e) {
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
                return resolvedHandler(node(e.id()), e);
            }
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED -> {
                out.println("udaddy: event: RDMA_CM_EVENT_" + t.name() + ", error: " + e.status());
                connectsLeft--;
                return e.status();
            }
            default -> {
                return 0; // DEVICE_REMOVAL: cleaned up after the test, as udaddy does
            }
        }
    }

    private Node node(CmId id) {
        for (Node n : nodes) {
            if (n.cmId == id) {
                return n;
            }
        }
        throw new IllegalStateException("an event for an id that is not the test's: " + id);
    }

    private int addrHandler(Node n) {
        try {
            n.cmId.resolveRoute(2000);
            return 0;
        } catch (VerbsException e) {
            perror("udaddy: resolve route failed", e);
            connectsLeft--;
            return e.errno();
        }
    }

    private int routeHandler(Node n) {
        String step = "udaddy: unable to create QP";
        try {
            int ret = verifyTestParams(n);
            if (ret != 0) {
                connectsLeft--;
                return ret;
            }
            initNode(n);
            postRecvs(n);
            step = "udaddy: failure connecting";
            n.cmId.connect(new ConnParam());
            return 0;
        } catch (VerbsException e) {
            perror(step, e);
            connectsLeft--;
            return e.errno();
        }
    }

    private int connectHandler(CmId id) {
        if (connIndex == connections) {
            out.println("udaddy: failing connection request");
            id.reject(null);
            return -Errno.ENOMEM;
        }
        Node n = nodes[connIndex++];
        n.cmId = id;
        String step = "udaddy: unable to create QP";
        int ret;
        try {
            ret = verifyTestParams(n);
            if (ret == 0) {
                initNode(n);
                postRecvs(n);
                step = "udaddy: failure accepting";
                id.accept(new ConnParam().qpNum(id.qp().qpn()));
                n.connected = true;
                connectsLeft--;
                return 0;
            }
        } catch (VerbsException e) {
            perror(step, e);
            ret = e.errno();
        }
        n.cmId = null;
        connectsLeft--;
        out.println("udaddy: failing connection request");
        try {
            id.reject(null);
        } catch (VerbsException ignored) {
            // the id is gone already
        }
        destroyResources(n, id);
        id.close();
        return ret;
    }

    /** ESTABLISHED of a UD id: the server's QPN, Q_Key and address from the SIDR_REP. */
    private int resolvedHandler(Node n, CmEvent e) {
        n.remoteQpn = e.param().qpNum();
        n.remoteQkey = e.qkey();
        try {
            n.ah = n.pd.createAh(e.ahAttr());
        } catch (VerbsException ex) {
            out.println("udaddy: failure creating address handle (" + ex.getMessage() + ")");
            connectsLeft--;
            return -1;
        }
        n.connected = true;
        connectsLeft--;
        return 0;
    }

    // ------------------------------------------------------------------ verbs

    /** A datagram holds at most the port's active MTU. */
    private int verifyTestParams(Node n) {
        int mtu = n.cmId.context().queryPort(n.cmId.portNum()).activeMtu().bytes();
        if (messageCount > 0 && messageSize > mtu) {
            out.println("udaddy: message_size " + messageSize + " is larger than active mtu " + mtu);
            return -Errno.EINVAL;
        }
        return 0;
    }

    private void initNode(Node n) {
        Context ctx = n.cmId.context();
        n.pd = ctx.allocPd();
        int wrs = messageCount > 0 ? messageCount : 1;
        n.cq = ctx.createCq(2 * wrs);
        QpInitAttr attr = new QpInitAttr(QpType.UD, n.cq, n.cq).cap(new QpCap(wrs, wrs, 1, 1, 0));
        n.cmId.createQp(n.pd, attr);
        if (messageCount > 0) {
            n.mem = arena.allocate(messageSize + GRH, 64);
            n.mr = n.pd.regMr(n.mem, Access.LOCAL_WRITE);
        }
    }

    private void postRecvs(Node n) {
        if (messageCount == 0) {
            return;
        }
        RecvWorkRequest wr = new RecvWorkRequest().wrId(n.id).sge(n.mr, 0, messageSize + GRH);
        for (int i = 0; i < messageCount; i++) {
            n.cmId.qp().postRecv(wr);
        }
    }

    /** {@code -C} SENDs with the own QPN as immediate, to the node's address handle. */
    private void postSends(Node n, int flags) {
        if (!n.connected || messageCount == 0) {
            return;
        }
        SendWorkRequest wr = new SendWorkRequest().wrId(n.id).opcode(WrOpcode.SEND_WITH_IMM).flags(flags)
                .immData(n.cmId.qp().qpn()).sge(n.mr, 0, messageSize).ud(n.ah, n.remoteQpn, n.remoteQkey);
        for (int i = 0; i < messageCount; i++) {
            n.cmId.qp().postSend(wr);
        }
    }

    /**
     * Waits for {@code -C} completions on every connected node's CQ; the first one of a node without an
     * address handle (the server's receive) makes the reply's, as udaddy's create_reply_ah. Unlike
     * udaddy, which spins without a bound and ignores the status, a wait is bounded by --timeout and a
     * failed completion ends the test with EIO.
     */
    private int pollCqs() {
        IdleStrategy idle = IdleStrategy.backoff();
        long bound = TimeUnit.SECONDS.toNanos(timeoutSeconds);
        for (Node n : nodes) {
            if (!n.connected) {
                continue;
            }
            for (int done = 0; done < messageCount; ) {
                int got = n.cq.poll(wcs, Math.min(wcs.length, messageCount - done), idle, bound);
                if (got == 0) {
                    out.println("udaddy: connection " + n.id + ": " + done + " of " + messageCount
                            + " completions within " + timeoutSeconds + " s");
                    return Errno.ETIMEDOUT;
                }
                for (int i = 0; i < got; i++) {
                    if (!wcs[i].isSuccess()) {
                        out.println("udaddy: connection " + n.id + ": completion with status " + wcs[i].status());
                        return Errno.EIO;
                    }
                }
                if (n.ah == null) {
                    try {
                        createReplyAh(n, wcs[0]);
                    } catch (VerbsException e) {
                        out.println("udaddy: failed to create reply AH (" + e.getMessage() + ")");
                        return -1;
                    }
                }
                done += got;
            }
        }
        return 0;
    }

    /** The address handle back to a receive's sender (its GRH), its QPN (the immediate), the own Q_Key. */
    private void createReplyAh(Node n, WorkCompletion wc) {
        n.ah = n.pd.createAhFromWc(wc, n.mem.asSlice(0, GRH), n.cmId.portNum());
        n.remoteQpn = wc.immData() & 0xFF_FFFF;
        n.remoteQkey = n.cmId.qp().query().qkey;
    }

    private void perror(String what, VerbsException e) {
        out.println(what + ": " + CmUtil.strerror(e.errno()) + " (" + e.getMessage() + ")");
    }

    private void destroyNodes() {
        if (nodes == null) {
            return;
        }
        for (Node n : nodes) {
            if (n != null && n.cmId != null) {
                destroyResources(n, n.cmId);
                n.cmId.close(); // after every device resource, as udaddy destroys its ids last
            }
        }
    }

    private void destroyResources(Node n, CmId id) {
        try {
            if (n.ah != null) {
                n.ah.close();
            }
            if (id.qp() != null) {
                id.destroyQp();
            }
            if (n.cq != null) {
                n.cq.close();
            }
            if (n.mr != null) {
                n.mr.close();
            }
            if (n.pd != null) {
                n.pd.close();
            }
        } catch (VerbsException e) {
            out.println("udaddy: cleaning up connection " + n.id + ": " + e.getMessage());
        }
    }
}
