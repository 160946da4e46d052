// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.mckey;

import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.rdma4j.cm.CmEvent;
import org.rdma4j.cm.CmEventChannel;
import org.rdma4j.cm.CmId;
import org.rdma4j.cm.MulticastJoinFlag;
import org.rdma4j.cm.PortSpace;
import org.rdma4j.tools.cli.CmEvents;
import org.rdma4j.tools.device.GidText;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AddressHandle;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * One run of {@code rdma4j mckey}: librdmacm's mckey on the cm module. Each of the -c nodes is a UD id
 * (RDMA_PS_UDP) that resolves the group's address (from -b), creates its PD, CQ, UD QP and message
 * buffer on ADDR_RESOLVED, posts its receives (receiver), and joins the group; on MULTICAST_JOIN it
 * prints the group's GID and makes the address handle. After the pause the sender posts -C SEND_WITH_IMM
 * datagrams of -S bytes to QPN 0xFFFFFF, the receiver waits for -C completions on every node; then every
 * node leaves. Messages and order are mckey's; rdma4j bounds every wait (--timeout), checks that every
 * receive completed with success, and has the sender's last datagram signaled and waited for, so that
 * none is still queued when the QP goes.
 */
final class Mckey {
    /** Bytes of the GRH area in front of every UD receive. */
    static final int GRH = 40;

    private final PrintWriter out;
    private final PrintWriter err;
    private final boolean sender;
    private final boolean sendOnly;
    private final int count;
    private final int size;
    private final long pauseMs;
    private final long timeoutNs;

    private final List<Node> nodes = new ArrayList<>();
    private final Map<CmId, Node> byId = new IdentityHashMap<>();
    private int connectsLeft;

    /** A node of mckey: an id with its verbs resources. */
    private static final class Node {
        final int index;
        final CmId id;
        ProtectionDomain pd;
        CompletionQueue cq;
        MemoryRegion mr;
        QueuePair qp;
        AddressHandle ah;
        int remoteQpn;
        int remoteQkey;
        boolean connected;

        Node(int index, CmId id) {
            this.index = index;
            this.id = id;
        }
    }

    Mckey(PrintWriter out, PrintWriter err, boolean sender, boolean sendOnly, int count, int size, long pauseMs,
            long timeoutNs) {
        this.out = out;
        this.err = err;
        this.sender = sender;
        this.sendOnly = sendOnly;
        this.count = size == 0 ? 0 : count; // mckey: no message size, no messages
        this.size = size;
        this.pauseMs = pauseMs;
        this.timeoutNs = timeoutNs;
    }

    /** Runs the test with {@code connections} nodes; {@return mckey's return status (0 when every step worked)} */
    int run(InetSocketAddress src, InetSocketAddress group, int connections) throws InterruptedException {
        int ret;
        try (CmEventChannel channel = new CmEventChannel()) {
            for (int i = 0; i < connections; i++) {
                CmId id = channel.createId(PortSpace.UDP);
                Node n = new Node(i, id);
                nodes.add(n);
                byId.put(id, n);
            }
            connectsLeft = connections;
            try {
                ret = run(channel, src, group);
            } finally {
                out.println("test complete");
                for (Node n : nodes) {
                    destroy(n);
                }
            }
        }
        out.println("return status " + ret);
        out.flush();
        return ret;
    }

    private int run(CmEventChannel channel, InetSocketAddress src, InetSocketAddress group)
            throws InterruptedException {
        out.println("mckey: starting " + (sender ? "client" : "server"));
        out.println("mckey: joining");
        out.flush();
        int ret = 0;
        for (Node n : nodes) {
            try {
                if (src != null) {
                    n.id.bindAddr(src);
                }
                n.id.resolveAddr(src, group, 2000);
            } catch (VerbsException e) {
                perror(src != null && n.id.localAddress() == null ? "mckey: addr bind failure"
                        : "mckey: resolve addr failure", e);
                connectsLeft--;
                return -1;
            }
        }
        ret = connectEvents(channel, group);
        if (ret == 0) {
            if (pauseMs > 0) {
                Thread.sleep(pauseMs); // mckey's pause "to give SM chance to configure switches"
            }
            if (count > 0) {
                if (sender) {
                    out.println("initiating data transfers");
                    out.flush();
                    for (Node n : nodes) {
                        ret = postSends(n);
                        if (ret != 0) {
                            break;
                        }
                    }
                } else {
                    out.println("receiving data transfers");
                    out.flush();
                    ret = pollCqs();
                }
                if (ret == 0) {
                    out.println("data transfers complete");
                }
            }
        }
        int failed = ret;
        for (Node n : nodes) {
            try {
                n.id.leaveMulticast(group.getAddress());
                ret = 0;
            } catch (VerbsException e) {
                perror("mckey: failure leaving", e);
                ret = -1;
            }
        }
        return failed != 0 ? failed : ret;
    }

    /** mckey's connect_events: handles events until every node joined or one failed. */
    private int connectEvents(CmEventChannel channel, InetSocketAddress group) throws InterruptedException {
        int ret = 0;
        while (connectsLeft > 0 && ret == 0) {
            ret = CmEvents.next(channel::getEvent, timeoutNs, TimeUnit.NANOSECONDS, e -> handle(e, group), () -> {
                err.println("mckey: no event within " + TimeUnit.NANOSECONDS.toSeconds(timeoutNs) + " s ("
                        + connectsLeft + " node(s) not joined)");
                return -Errno.ETIMEDOUT;
            });
        }
        return ret;
    }

    private int handle(CmEvent e, InetSocketAddress group) {
        Node n = byId.get(e.id());
        switch (e.type()) {
            case ADDR_RESOLVED -> {
                return addrHandler(n, group);
            }
            case MULTICAST_JOIN -> {
                return joinHandler(n, e);
            }
            case ADDR_ERROR, ROUTE_ERROR, MULTICAST_ERROR -> {
                CmEvents.printError(out, "mckey", e);
                connectsLeft--;
                return e.status() != 0 ? e.status() : -1;
            }
            default -> {
                return 0;
            }
        }
    }

    private int addrHandler(Node n, InetSocketAddress group) {
        try {
            int mtu = n.id.context().queryPort(n.id.portNum()).activeMtu().bytes();
            if (count > 0 && size > mtu) {
                out.println("mckey: message_size " + size + " is larger than active mtu " + mtu);
                connectsLeft--;
                return -Errno.EINVAL;
            }
            initNode(n);
            if (!sender) {
                for (int i = 0; i < count; i++) {
                    n.qp.postRecv(new RecvWorkRequest().wrId(i).sge(n.mr, 0, size + GRH));
                }
            }
            n.id.joinMulticast(group.getAddress(),
                    sendOnly ? MulticastJoinFlag.SEND_ONLY_FULL_MEMBER : MulticastJoinFlag.FULL_MEMBER, n);
            return 0;
        } catch (VerbsException e) {
            perror("mckey: failure joining", e);
            connectsLeft--;
            return -1;
        }
    }

    private void initNode(Node n) {
        n.pd = n.id.context().allocPd();
        n.cq = n.id.context().createCq(count > 0 ? count * 2 : 2);
        int wrs = count > 0 ? count : 1;
        n.qp = n.id.createQp(n.pd, new QpInitAttr(QpType.UD, n.cq, n.cq).cap(new QpCap(wrs, wrs, 1, 1, 0)));
        if (count > 0) {
            n.mr = n.pd.regMr(Arena.ofShared().allocate(size + GRH, 64), Access.LOCAL_WRITE);
            for (int i = 0; i < size; i++) {
                n.mr.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) ('a' + i % 26));
            }
        }
    }

    private int joinHandler(Node n, CmEvent e) {
        var ah = e.ahAttr();
        out.println("mckey: joined dgid: " + GidText.inetNtop(ah.grh().dgid()) + " mlid 0x"
                + Integer.toHexString(ah.dlid()) + " sl " + ah.sl());
        out.flush();
        n.remoteQpn = e.param().qpNum();
        n.remoteQkey = e.qkey();
        try {
            n.ah = n.pd.createAh(ah);
        } catch (VerbsException ex) {
            out.println("mckey: failure creating address handle");
            connectsLeft--;
            return -1;
        }
        n.connected = true;
        connectsLeft--;
        return 0;
    }

    /** -C SEND_WITH_IMM datagrams (the immediate: the sender's QPN), the last one signaled and waited for. */
    private int postSends(Node n) {
        if (!n.connected || count == 0) {
            return 0;
        }
        SendWorkRequest wr = new SendWorkRequest().opcode(WrOpcode.SEND_WITH_IMM).immData(n.qp.qpn())
                .sge(n.mr, 0, size).ud(n.ah, n.remoteQpn, n.remoteQkey);
        try {
            for (int i = 0; i < count; i++) {
                wr.wrId(i).flags(i == count - 1 ? SendFlag.SIGNALED : 0);
                n.qp.postSend(wr);
            }
        } catch (VerbsException e) {
            out.println("failed to post sends: " + -e.errno());
            return -e.errno();
        }
        WorkCompletion[] wc = WorkCompletion.array(1);
        long deadline = System.nanoTime() + timeoutNs;
        while (n.cq.poll(wc, 1) == 0) {
            if (System.nanoTime() - deadline > 0) {
                err.println("mckey: the last send did not complete within the timeout");
                return -Errno.ETIMEDOUT;
            }
            Thread.onSpinWait();
        }
        if (wc[0].status() != WcStatus.SUCCESS) {
            err.println("mckey: send completed with " + wc[0].status());
            return -Errno.EIO;
        }
        return 0;
    }

    /** mckey's poll_cqs: -C completions on every joined node (bounded by the timeout; each must succeed). */
    private int pollCqs() {
        WorkCompletion[] wc = WorkCompletion.array(8);
        long deadline = System.nanoTime() + timeoutNs;
        for (Node n : nodes) {
            if (!n.connected) {
                continue;
            }
            int done = 0;
            while (done < count) {
                int got = n.cq.poll(wc, 8);
                for (int i = 0; i < got; i++) {
                    if (wc[i].status() != WcStatus.SUCCESS) {
                        err.println("mckey: node " + n.index + ": receive completed with " + wc[i].status());
                        return -Errno.EIO;
                    }
                }
                done += got;
                if (got == 0) {
                    if (System.nanoTime() - deadline > 0) {
                        err.println("mckey: node " + n.index + " received " + done + " of " + count
                                + " messages within the timeout");
                        return -Errno.ETIMEDOUT;
                    }
                    Thread.onSpinWait();
                }
            }
        }
        return 0;
    }

    private void destroy(Node n) {
        try {
            if (n.ah != null) {
                n.ah.close();
            }
            if (n.qp != null) {
                n.id.destroyQp();
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
            err.println("mckey: node " + n.index + ": " + e.getMessage());
        }
        n.id.close(); // after every device resource, as mckey does
    }

    private void perror(String what, VerbsException e) {
        err.println(what + ": " + e.getMessage());
        err.flush();
    }
}
