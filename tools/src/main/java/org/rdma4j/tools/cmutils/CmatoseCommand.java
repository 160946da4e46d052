// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cmutils;

import java.lang.foreign.MemorySegment;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.ConnParam;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WrOpcode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

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
                + "whose GID is -b (or --bind, or the source of the host's route to -s); with none, a soft "
                + "device over RoCEv2/UDP is made on -b (--bind ADDRESS chooses it explicitly).",
            "Exit code: cmatose's return status (0, or the failing event's status or errno; 255 for -1), 2 "
                + "on a bad flag."})
public final class CmatoseCommand extends CmaTest<CmatoseCommand.Conn> {
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

    private int disconnectsLeft;

    /** One connection: the id's PD, CQs and message buffer. */
    static final class Conn extends CmaTest.Node {
        ProtectionDomain pd;
        CompletionQueue sendCq;
        CompletionQueue recvCq;
        MemoryRegion mr;
        MemorySegment mem;

        Conn(int id) {
            super(id);
        }
    }

    @Override
    String name() {
        return "cmatose";
    }

    @Override
    PortSpace portSpace() {
        return PortSpace.TCP;
    }

    @Override
    int port() {
        return port;
    }

    @Override
    Conn[] newNodes(int n) {
        Conn[] a = new Conn[n];
        for (int i = 0; i < n; i++) {
            a[i] = new Conn(i);
        }
        return a;
    }

    @Override
    void checkOwnOptions() {
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

    @Override
    int serve() throws InterruptedException {
        int ret = connectEvents();
        if (ret != 0) {
            return ret;
        }
        if (messageCount > 0) {
            out.println("initiating data transfers");
            for (Conn n : nodes) {
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
        for (Conn n : nodes) {
            if (n.connected) {
                n.connected = false;
                n.cmId.disconnect();
            }
        }
        ret = disconnectEvents();
        out.println("disconnected");
        return ret;
    }

    @Override
    int runClient() throws InterruptedException {
        int ret = connectAll();
        if (ret == 0 && messageCount > 0) {
            out.println("receiving data transfers");
            ret = pollCqs(false);
            if (ret == 0) {
                out.println("sending replies");
                for (Conn n : nodes) {
                    postSends(n);
                }
                out.println("data transfers complete");
            }
        }
        int ret2 = disconnectEvents();
        return ret2 != 0 ? ret2 : ret;
    }

    // ------------------------------------------------------------------ events

    private int disconnectEvents() throws InterruptedException {
        int ret = 0;
        while (disconnectsLeft > 0 && ret == 0) {
            ret = nextEvent("disconnect", disconnectsLeft + " disconnects");
        }
        return ret;
    }

    @Override
    int established(Conn n, CmEvent e) {
        if (n != null) {
            n.connected = true;
        }
        connectsLeft--;
        disconnectsLeft++;
        return 0;
    }

    @Override
    int disconnected(CmId id) {
        try {
            id.disconnect(); // answers the peer's DREQ; after our own DREQ there is nothing to do
        } catch (VerbsException ignored) {
            // cmatose ignores rdma_disconnect's result here too
        }
        disconnectsLeft--;
        return 0;
    }

    @Override
    int addrHandler(Conn n) {
        if (ackTimeout != null) {
            n.cmId.setAckTimeout(ackTimeout);
        }
        return super.addrHandler(n);
    }

    @Override
    int routeHandler(Conn n) {
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

    @Override
    int connectHandler(Conn n, CmId id) {
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

    private void initNode(Conn n) {
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

    private void postRecvs(Conn n) {
        if (messageCount == 0) {
            return;
        }
        RecvWorkRequest wr = new RecvWorkRequest().wrId(n.id).sge(n.mr, 0, messageSize);
        for (int i = 0; i < messageCount; i++) {
            n.cmId.qp().postRecv(wr);
        }
    }

    private void postSends(Conn n) {
        if (!n.connected || messageCount == 0) {
            return;
        }
        SendWorkRequest wr = new SendWorkRequest().wrId(n.id).opcode(WrOpcode.SEND).flags(0).sge(n.mr, 0, messageSize);
        for (int i = 0; i < messageCount; i++) {
            n.cmId.qp().postSend(wr);
        }
    }

    /** {@code -C} completions on every connected node's send or receive CQ. */
    private int pollCqs(boolean send) {
        for (Conn n : nodes) {
            if (!n.connected) {
                continue;
            }
            int ret = pollNode(n, send ? n.sendCq : n.recvCq, send ? "send completions" : "receive completions", null);
            if (ret != 0) {
                return ret;
            }
        }
        return 0;
    }

    @Override
    void destroyResources(Conn n) {
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
        }
    }
}
