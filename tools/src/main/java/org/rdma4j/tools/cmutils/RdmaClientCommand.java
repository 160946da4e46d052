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
import org.rdma4j.cm.AddrInfo;
import org.rdma4j.cm.Endpoint;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.tools.device.CmDevices;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
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
 * {@code rdma4j rdma-client}: rdmacm-utils' {@code rdma_client} on rdma4j's {@link Endpoint}. It
 * resolves the server (127.0.0.1:7471 by default) and makes its QP (rdma_create_ep), posts a receive
 * for 16 bytes, connects, sends 16 bytes (inline when the QP allows it), waits for the send's and then
 * the receive's completion, and disconnects. Output and exit status are rdma_client's. The source
 * address is the {@code --bind} device's when one is made, else the host's route's (as rdma_cm's).
 */
@Command(name = "rdma-client", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"The client of rdmacm-utils' rdma_server/rdma_client pair: connects, sends a 16-byte "
                + "message, receives one, disconnects.",
            "The device is the one with the source address of the host's route to -s (as rdma_cm picks it); "
                + "--bind ADDRESS makes a soft device over RoCEv2/UDP on ADDRESS and connects from it.",
            "Prints rdma_client's lines; exit code 0 after the exchange, 255 (rdma_client's -1) when a step "
                + "failed (no server: \"rdma_connect: Connection refused\" or, when nothing answers, "
                + "\"Connection timed out\" after --timeout), 2 on a bad flag."})
public final class RdmaClientCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    DeviceOptions devices;

    @Option(names = "-s", order = 1, paramLabel = "server_address",
            description = "the server's address (default 127.0.0.1)")
    String server = "127.0.0.1";

    @Option(names = "-p", order = 2, paramLabel = "port_number", converter = CNumber.class,
            description = "the server's port (default " + RdmaServerCommand.DEFAULT_PORT + ")")
    int port = RdmaServerCommand.DEFAULT_PORT;

    @Option(names = "-v", order = 3, description = "rdma4j: say what happens (the connection, the message's length)")
    boolean verbose;

    @Option(names = "--timeout", order = 4, paramLabel = "SECONDS", converter = CNumber.class,
            description = "rdma4j: give up a step (resolving, connecting, each completion, the disconnect) after "
                    + "SECONDS (default 10)")
    int timeoutSeconds = 10;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (timeoutSeconds < 1) {
            throw new ParameterException(spec.commandLine(), "--timeout must be at least 1 second");
        }
        if (port < 0 || port > 65535) {
            throw new ParameterException(spec.commandLine(), "-p " + port + " is outside 0..65535");
        }
        out.println("rdma_client: start");
        out.flush();
        int ret;
        try {
            ret = run(out, err);
        } finally {
            out.flush();
            err.flush();
        }
        out.println("rdma_client: end " + ret);
        out.flush();
        return ret;
    }

    private int run(PrintWriter out, PrintWriter err) throws InterruptedException {
        InetAddress addr;
        try {
            addr = InetAddress.getByName(server);
        } catch (UnknownHostException e) {
            out.println("rdma_getaddrinfo: Name or service not known");
            return -2; // EAI_NONAME
        }
        Device made;
        try {
            made = CmDevices.softDeviceFor(devices, devices.bindAddress());
        } catch (VerbsException e) {
            CmUtil.perror(err, "rdma_create_ep", e);
            return -1;
        }
        try {
            InetAddress src = devices.bindAddress();
            AddrInfo res = new AddrInfo(src == null ? null : new InetSocketAddress(src, 0),
                    new InetSocketAddress(addr, port), false, PortSpace.TCP);
            QpInitAttr attr = new QpInitAttr().cap(new QpCap(1, 1, 1, 1, RdmaServerCommand.MESSAGE)).sqSigAll(true);
            Endpoint id;
            try {
                id = Endpoint.create(res, null, attr, Duration.ofSeconds(timeoutSeconds));
            } catch (VerbsException e) {
                CmUtil.perror(err, "rdma_create_ep", e);
                return -1;
            }
            String step = "ibv_query_qp";
            try (Arena arena = Arena.ofShared(); id) {
                // rdma_create_ep tells what the QP got in its attributes; here the QP is asked
                QpInitAttr got = new QpInitAttr();
                id.qp().query(new org.rdma4j.verbs.QpAttr(), got);
                int sendFlags = 0;
                if (got.cap.maxInlineData >= RdmaServerCommand.MESSAGE) {
                    sendFlags = SendFlag.INLINE;
                } else {
                    out.println("rdma_client: device doesn't support IBV_SEND_INLINE, using sge sends");
                }
                MemorySegment recvMsg = arena.allocate(RdmaServerCommand.MESSAGE, 64);
                MemorySegment sendMsg = arena.allocate(RdmaServerCommand.MESSAGE, 64);
                step = "rdma_reg_msgs for recv_msg";
                MemoryRegion mr = id.regMsgs(recvMsg);
                MemoryRegion sendMr = null;
                if (sendFlags == 0) {
                    step = "rdma_reg_msgs for send_msg";
                    sendMr = id.regMsgs(sendMsg);
                }
                step = "rdma_post_recv";
                id.postRecv(0, recvMsg, mr);
                step = "rdma_connect";
                id.connect(null);
                if (verbose) {
                    out.println("connected " + id.localAddress() + " -> " + id.remoteAddress());
                    out.flush();
                }
                step = "rdma_post_send";
                id.postSend(0, sendMsg, sendMr, sendFlags);
                WorkCompletion wc = new WorkCompletion();
                step = "rdma_get_send_comp";
                id.getSendComp(wc);
                Exchange.check(wc, WcOpcode.SEND, -1);
                step = "rdma_get_recv_comp";
                id.getRecvComp(wc);
                Exchange.check(wc, WcOpcode.RECV, RdmaServerCommand.MESSAGE);
                if (verbose) {
                    out.println("received " + wc.byteLen() + " bytes");
                    out.flush();
                }
                Exchange.disconnect(id, out, verbose);
                return 0;
            } catch (VerbsException e) {
                CmUtil.perror(err, step, e);
                return -1;
            }
        } finally {
            CmUtil.release(devices, made, err, verbose);
        }
    }
}
