// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cmutils;

import java.lang.foreign.MemorySegment;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
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
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

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
                + "whose GID is -b (or --bind, or the source of the host's route to -s); with none, a soft "
                + "device over RoCEv2/UDP is made on -b (--bind ADDRESS chooses it explicitly).",
            "-p is the port (udaddy's is always 7174 and its -p, kept for old scripts, a port space).",
            "Exit code: udaddy's return status (0, or the failing event's status or errno), 2 on a bad flag."})
public final class UdaddyCommand extends CmaTest<UdaddyCommand.UdNode> {
    /** udaddy's port, fixed in udaddy.c. */
    static final int DEFAULT_PORT = 7174;
    /** Bytes of the GRH area ahead of every UD receive. */
    private static final int GRH = 40;

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

    /** One id: its PD, CQ, datagram buffer (GRH area first) and the address of its peer. */
    static final class UdNode extends CmaTest.Node {
        ProtectionDomain pd;
        CompletionQueue cq;
        MemoryRegion mr;
        MemorySegment mem;
        AddressHandle ah;
        int remoteQpn;
        int remoteQkey;

        UdNode(int id) {
            super(id);
        }
    }

    @Override
    String name() {
        return "udaddy";
    }

    @Override
    PortSpace portSpace() {
        return PortSpace.UDP;
    }

    @Override
    int port() {
        return port;
    }

    @Override
    UdNode[] newNodes(int n) {
        UdNode[] a = new UdNode[n];
        for (int i = 0; i < n; i++) {
            a[i] = new UdNode(i);
        }
        return a;
    }

    @Override
    void checkOwnOptions() {
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

    @Override
    int serve() throws InterruptedException {
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
            for (UdNode n : nodes) {
                postSends(n, SendFlag.SIGNALED);
            }
            ret = pollCqs();
            if (ret != 0) {
                return ret;
            }
            out.println("data transfers complete");
        }
        return 0;
    }

    @Override
    int runClient() throws InterruptedException {
        int ret = connectAll();
        if (ret == 0 && messageCount > 0) {
            out.println("initiating data transfers");
            for (UdNode n : nodes) {
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

    @Override
    int routeHandler(UdNode n) {
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

    @Override
    int connectHandler(UdNode n, CmId id) {
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
        connectsLeft--;
        out.println("udaddy: failing connection request");
        try {
            id.reject(null);
        } catch (VerbsException ignored) {
            // the id is gone already
        }
        destroyResources(n);
        n.cmId = null;
        id.close();
        return ret;
    }

    /** ESTABLISHED of a UD id: the server's QPN, Q_Key and address from the SIDR_REP. */
    @Override
    int established(UdNode n, CmEvent e) {
        if (n == null) {
            return 0; // not an id of the test's
        }
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
    private int verifyTestParams(UdNode n) {
        int mtu = n.cmId.context().queryPort(n.cmId.portNum()).activeMtu().bytes();
        if (messageCount > 0 && messageSize > mtu) {
            out.println("udaddy: message_size " + messageSize + " is larger than active mtu " + mtu);
            return -Errno.EINVAL;
        }
        return 0;
    }

    private void initNode(UdNode n) {
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

    private void postRecvs(UdNode n) {
        if (messageCount == 0) {
            return;
        }
        RecvWorkRequest wr = new RecvWorkRequest().wrId(n.id).sge(n.mr, 0, messageSize + GRH);
        for (int i = 0; i < messageCount; i++) {
            n.cmId.qp().postRecv(wr);
        }
    }

    /** {@code -C} SENDs with the own QPN as immediate, to the node's address handle. */
    private void postSends(UdNode n, int flags) {
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
     * {@code -C} completions on every connected node's CQ; the first one of a node without an address
     * handle (the server's receive) makes the reply's, as udaddy's create_reply_ah.
     */
    private int pollCqs() {
        for (UdNode n : nodes) {
            if (!n.connected) {
                continue;
            }
            int ret = pollNode(n, n.cq, "completions", n.ah != null ? null : wc -> {
                try {
                    createReplyAh(n, wc);
                    return 0;
                } catch (VerbsException e) {
                    out.println("udaddy: failed to create reply AH (" + e.getMessage() + ")");
                    return -1;
                }
            });
            if (ret != 0) {
                return ret;
            }
        }
        return 0;
    }

    /** The address handle back to a receive's sender (its GRH), its QPN (the immediate), the own Q_Key. */
    private void createReplyAh(UdNode n, WorkCompletion wc) {
        n.ah = n.pd.createAhFromWc(wc, n.mem.asSlice(0, GRH), n.cmId.portNum());
        n.remoteQpn = wc.immData() & 0xFF_FFFF;
        n.remoteQkey = n.cmId.qp().query().qkey;
    }

    @Override
    void destroyResources(UdNode n) {
        try {
            if (n.ah != null) {
                n.ah.close();
            }
            if (n.cmId.qp() != null) {
                n.cmId.destroyQp();
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
