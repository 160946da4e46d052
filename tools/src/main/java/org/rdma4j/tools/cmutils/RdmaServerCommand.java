// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cmutils;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.rdma4j.cm.AddrInfo;
import org.rdma4j.cm.Endpoint;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.tools.device.CmDevices;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WorkCompletion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j rdma-server}: rdmacm-utils' {@code rdma_server} on rdma4j's {@link Endpoint} (the
 * rdma_create_ep layer). It listens (port 7471 by default), takes one connection request, posts a
 * receive for a 16-byte message, accepts, waits for the client's message, answers with 16 bytes (inline
 * when the QP allows 16 bytes of inline data), waits for that send's completion and disconnects.
 * Output and exit status are rdma_server's: {@code rdma_server: start}, {@code rdma_server: end N}, a
 * failed step as perror's {@code step: strerror} line, N = 0 on success and -1 (exit status 255) when a
 * step failed.
 */
@Command(name = "rdma-server", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"The server of rdmacm-utils' rdma_server/rdma_client pair: waits for one connection, "
                + "receives a 16-byte message and sends one back, then disconnects.",
            "The device is the one whose GID is -s; with none, a soft device over RoCEv2/UDP is made on that "
                + "address (--bind ADDRESS chooses it explicitly).",
            "Prints rdma_server's lines; exit code 0 after the exchange, 255 (rdma_server's -1) when a step "
                + "failed, 2 on a bad flag.",
            "Example:",
            "  rdma4j rdma-server -s 127.0.0.1 &",
            "  rdma4j rdma-client -s 127.0.0.1 --bind 127.0.0.2"})
public final class RdmaServerCommand implements Callable<Integer> {
    /** rdma_server's and rdma_client's port. */
    public static final int DEFAULT_PORT = 7471;
    /** The size of the message each side sends (rdma_server.c's send_msg and recv_msg). */
    static final int MESSAGE = 16;

    @Spec
    CommandSpec spec;

    @Mixin
    DeviceOptions devices;

    @Option(names = "-s", order = 1, paramLabel = "server_address",
            description = "the address to listen on (default 0.0.0.0: every IPv4 address)")
    String server = "0.0.0.0";

    @Option(names = "-p", order = 2, paramLabel = "port_number", converter = CNumber.class,
            description = "the port (default " + DEFAULT_PORT + ")")
    int port = DEFAULT_PORT;

    @Option(names = "-v", order = 3, description = "rdma4j: say what happens (\"listening on\", the peer, "
            + "the message's length)")
    boolean verbose;

    @Option(names = "--timeout", order = 4, paramLabel = "SECONDS", converter = CNumber.class,
            description = "rdma4j: give up a step (accepting, each completion, the disconnect) after SECONDS "
                    + "(default 10)")
    int timeoutSeconds = 10;

    @Option(names = "--accept-timeout", order = 5, paramLabel = "SECONDS", converter = CNumber.class,
            description = "rdma4j: give up when no client connects within SECONDS (default 0: wait until "
                    + "interrupted, as rdma_server does)")
    int acceptSeconds;

    @Option(names = "--connections", order = 6, paramLabel = "N", converter = CNumber.class,
            description = "rdma4j: serve N clients in turn on the one listener (default 1, as rdma_server)")
    int connections = 1;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (timeoutSeconds < 1) {
            throw new ParameterException(spec.commandLine(), "--timeout must be at least 1 second");
        }
        if (acceptSeconds < 0 || connections < 1) {
            throw new ParameterException(spec.commandLine(), acceptSeconds < 0
                    ? "--accept-timeout must be 0 or more seconds" : "--connections must be at least 1");
        }
        if (port < 0 || port > 65535) {
            throw new ParameterException(spec.commandLine(), "-p " + port + " is outside 0..65535");
        }
        out.println("rdma_server: start");
        out.flush();
        int ret;
        try {
            ret = run(out, err);
        } finally {
            out.flush();
            err.flush();
        }
        out.println("rdma_server: end " + ret);
        out.flush();
        return ret;
    }

    private int run(PrintWriter out, PrintWriter err) throws InterruptedException {
        InetAddress addr;
        try {
            addr = InetAddress.getByName(server);
        } catch (UnknownHostException e) {
            out.println("rdma_getaddrinfo: Name or service not known");
            return -2; // EAI_NONAME, as rdma_server returns getaddrinfo's code
        }
        Device made;
        try {
            made = CmDevices.softDeviceFor(devices, addr);
        } catch (VerbsException e) {
            CmUtil.perror(err, "rdma_create_ep", e);
            return -1;
        }
        try {
            AddrInfo res = new AddrInfo(new InetSocketAddress(addr, port), null, true, PortSpace.TCP);
            QpInitAttr attr = new QpInitAttr().cap(new QpCap(1, 1, 1, 1, MESSAGE)).sqSigAll(true);
            Endpoint listen;
            try {
                listen = Endpoint.create(res, null, attr, Duration.ofSeconds(timeoutSeconds));
            } catch (VerbsException e) {
                CmUtil.perror(err, "rdma_create_ep", e);
                return -1;
            }
            try (listen) {
                try {
                    listen.listen(0);
                } catch (VerbsException e) {
                    CmUtil.perror(err, "rdma_listen", e);
                    return -1;
                }
                if (verbose) {
                    out.println("listening on " + listen.localAddress());
                    out.flush();
                }
                for (int c = 0; c < connections; c++) {
                    int r = serve(listen, out, err);
                    if (r != 0) {
                        return r;
                    }
                }
                return 0;
            }
        } finally {
            CmUtil.release(devices, made, err, verbose);
        }
    }

    /** One client: rdma_server's run() from rdma_get_request on. */
    private int serve(Endpoint listen, PrintWriter out, PrintWriter err) throws InterruptedException {
        Endpoint id;
        try {
            id = acceptSeconds > 0 ? listen.getRequest(acceptSeconds, TimeUnit.SECONDS) : listen.getRequest();
            if (id == null) {
                throw new VerbsException(Errno.ETIMEDOUT, "no connection request within " + acceptSeconds + " s");
            }
        } catch (VerbsException e) {
            CmUtil.perror(err, "rdma_get_request", e);
            return -1;
        }
        String step = "ibv_query_qp";
        try (Arena arena = Arena.ofShared(); id) {
            if (verbose) {
                out.println("connection request from " + id.remoteAddress());
                out.flush();
            }
            QpInitAttr init = new QpInitAttr();
            id.qp().query(new QpAttr(), init);
            int sendFlags = 0;
            if (init.cap.maxInlineData >= MESSAGE) {
                sendFlags = SendFlag.INLINE;
            } else {
                out.println("rdma_server: device doesn't support IBV_SEND_INLINE, using sge sends");
            }
            MemorySegment recvMsg = arena.allocate(MESSAGE, 64);
            MemorySegment sendMsg = arena.allocate(MESSAGE, 64);
            step = "rdma_reg_msgs for recv_msg";
            MemoryRegion mr = id.regMsgs(recvMsg);
            MemoryRegion sendMr = null;
            if (sendFlags == 0) {
                step = "rdma_reg_msgs for send_msg";
                sendMr = id.regMsgs(sendMsg);
            }
            step = "rdma_post_recv";
            id.postRecv(0, recvMsg, mr);
            step = "rdma_accept";
            id.accept(null);
            step = "rdma_get_recv_comp";
            WorkCompletion wc = new WorkCompletion();
            id.getRecvComp(wc);
            Exchange.check(wc, WcOpcode.RECV, MESSAGE);
            if (verbose) {
                out.println("received " + wc.byteLen() + " bytes");
                out.flush();
            }
            step = "rdma_post_send";
            id.postSend(0, sendMsg, sendMr, sendFlags);
            step = "rdma_get_send_comp";
            id.getSendComp(wc);
            Exchange.check(wc, WcOpcode.SEND, -1);
            Exchange.disconnect(id, out, verbose);
            return 0;
        } catch (VerbsException e) {
            CmUtil.perror(err, step, e);
            return -1;
        }
    }
}
