// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.rdma4j.soft.link.LinkLog;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;

/**
 * {@link UdpLink.Mode#NATIVE}: a libc UDP socket through FFM, batched receive with recvmmsg, the TTL and
 * TOS of every datagram from control messages, and on IPv6 UDP_NO_CHECK6_RX so rxe's zero-checksum
 * datagrams are accepted. Thread safety as {@link UdpSocket} says.
 */
class NativeUdpSocket implements UdpSocket, SendBatches.Sender {
    /** Requested socket buffer size (the kernel doubles it for bookkeeping, and caps it at net.core.rmem_max). */
    static final int SOCKET_BUFFER = 8 << 20;

    final int fd;
    final boolean v6;
    final LinuxSockets.Call sendCall = new LinuxSockets.Call();
    private final int receiveBufferBytes;
    private final MemorySegment sendAddr = Arena.ofAuto().allocate(LinuxSockets.SOCKADDR_SIZE, 8);
    // What the socket's per-packet IP header fields are set to now (-1 = unknown), under the send lock.
    private final MemorySegment optionScratch = Arena.ofAuto().allocate(8, 8);
    private int socketTtl = -1;
    private int socketMulticastTtl = -1;
    private int socketTos = -1;
    /** The socket's drop count as last read (kept when the socket closes). */
    private volatile long drops;
    private volatile boolean closed;

    // The receive token's holder only (see UdpSocket).
    private final LinuxSockets.Call receiveCall = new LinuxSockets.Call();
    private final MemorySegment vector;
    private final MemorySegment iovecs;
    private final MemorySegment names;
    private final MemorySegment controls;
    private final Packet[] slots = new Packet[BATCH];
    private final MemorySegment pollFd = Arena.ofAuto().allocate(8, 8);
    // The receive agent's wait for readability, outside the token (agent thread only).
    private final LinuxSockets.Call agentCall = new LinuxSockets.Call();
    private final MemorySegment agentPollFd = Arena.ofAuto().allocate(8, 8);
    // Waking a receiver blocked in poll(2) (guarded by wakeCall): an empty datagram to the socket itself.
    private final LinuxSockets.Call wakeCall = new LinuxSockets.Call();
    private final MemorySegment wakeAddr = Arena.ofAuto().allocate(LinuxSockets.SOCKADDR_SIZE, 8);
    private final int wakeAddrLength;
    // Batched sends (sendmmsg), under the link's send lock.
    private final MemorySegment sendVector;
    private final MemorySegment sendIovecs;
    /** Entry i of the send vector as a segment of its own (sendmmsg from there), and its sockaddr. */
    private final MemorySegment[] sendVectorAt = new MemorySegment[SEND_BATCH];
    private final MemorySegment[] sendNameAt = new MemorySegment[SEND_BATCH];
    private final MemorySegment[] sendDatagramAt = new MemorySegment[SEND_BATCH];
    private final int[] sendLengthAt = new int[SEND_BATCH];
    /** Null while sendmmsg works; else why the socket sends one datagram per call. */
    private volatile String sendBatchUnavailable = LinuxSockets.sendmmsgUnavailable();
    private long sendBatchCalls;
    // UDP segmentation offload (GSO), under the send lock: see sendStaged.
    /** Each staged datagram's destination (address and port), to find runs to one destination. */
    private final long[] destHighAt = new long[SEND_BATCH];
    private final long[] destLowAt = new long[SEND_BATCH];
    private final int[] destPortAt = new int[SEND_BATCH];
    /** Whether a staged datagram may join a GSO run: unicast (multicast leaves one per message). */
    private final boolean[] gsoAllowedAt = new boolean[SEND_BATCH];
    /** The messages of one sendStaged: a datagram each, or a GSO run of datagrams (iovecs of their slots). */
    private final MemorySegment gsoVector;
    private final MemorySegment[] gsoVectorAt = new MemorySegment[SEND_BATCH];
    private final MemorySegment gsoControls;
    private final int[] messageFirst = new int[SEND_BATCH];
    private final int[] messageCount = new int[SEND_BATCH];
    /**
     * The longest datagram a GSO message may carry; lowered below a size the kernel refused (EINVAL,
     * EIO, EMSGSIZE: a segment over the route's MTU, a device without checksum offload, a kernel
     * without UDP_SEGMENT), 0 when off (-Drdma4j.udp.gso=false, or raw mode).
     */
    private int gsoSegmentLimit;
    private long gsoMessages;
    private long gsoDatagrams;
    /** Entries 0..unprepared-1 of the vector need a packet and their fields set before the next receive. */
    private int unprepared = BATCH;
    private final PacketPool pool;

    NativeUdpSocket(byte[] local, int port, boolean v6, int interfaceIndex, PacketPool pool) throws IOException {
        this.v6 = v6;
        this.pool = pool;
        LinuxSockets.Call c = sendCall;
        fd = LinuxSockets.socket(c, v6 ? LinuxSockets.AF_INET6 : LinuxSockets.AF_INET, LinuxSockets.SOCK_DGRAM,
                LinuxSockets.IPPROTO_UDP);
        try {
            if (v6) {
                LinuxSockets.setIntOption(c, fd, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_V6ONLY, 1);
                LinuxSockets.setIntOption(c, fd, LinuxSockets.SOL_UDP, LinuxSockets.UDP_NO_CHECK6_RX, 1);
            }
            // A burst (a retransmitted window on many QPs) must fit in the receive queue, or the
            // kernel drops datagrams the transport then has to recover by timeouts.
            receiveBufferBytes = LinuxSockets.setBufferSize(c, fd, LinuxSockets.SO_RCVBUF,
                    LinuxSockets.SO_RCVBUFFORCE, SOCKET_BUFFER);
            LinuxSockets.setBufferSize(c, fd, LinuxSockets.SO_SNDBUF, LinuxSockets.SO_SNDBUFFORCE, SOCKET_BUFFER);
            LinuxSockets.setReceiveTimeout(c, fd, 100_000);
            try (Arena a = Arena.ofConfined()) {
                MemorySegment sa = a.allocate(LinuxSockets.SOCKADDR_SIZE, 8);
                int len = LinuxSockets.writeSockaddr(sa, local, port);
                LinuxSockets.bind(c, fd, sa, len);
            }
            askForHopLimitAndClass(c, fd, v6);
            sendMulticastFrom(c, fd, v6, local, interfaceIndex);
        } catch (IOException e) {
            LinuxSockets.close(fd);
            throw e;
        }
        Arena arena = Arena.ofAuto();
        vector = arena.allocate(LinuxSockets.MMSGHDR_SIZE * BATCH, 8);
        iovecs = arena.allocate(LinuxSockets.IOVEC_SIZE * BATCH, 8);
        names = arena.allocate(LinuxSockets.SOCKADDR_SIZE * BATCH, 8);
        controls = arena.allocate(UdpDatagrams.CONTROL_SIZE * BATCH, 8);
        wakeAddrLength = LinuxSockets.writeSockaddr(wakeAddr, local, port);
        sendVector = arena.allocate(LinuxSockets.MMSGHDR_SIZE * SEND_BATCH, 8);
        sendIovecs = arena.allocate(LinuxSockets.IOVEC_SIZE * SEND_BATCH, 8);
        MemorySegment sendNames = arena.allocate(LinuxSockets.SOCKADDR_SIZE * SEND_BATCH, 8);
        gsoVector = arena.allocate(LinuxSockets.MMSGHDR_SIZE * SEND_BATCH, 8);
        gsoControls = arena.allocate(GSO_CONTROL_SIZE * SEND_BATCH, 8);
        for (int i = 0; i < SEND_BATCH; i++) {
            sendVectorAt[i] = sendVector.asSlice(LinuxSockets.MMSGHDR_SIZE * i);
            sendNameAt[i] = sendNames.asSlice(LinuxSockets.SOCKADDR_SIZE * i, LinuxSockets.SOCKADDR_SIZE);
            gsoVectorAt[i] = gsoVector.asSlice(LinuxSockets.MMSGHDR_SIZE * i);
            long cm = GSO_CONTROL_SIZE * i; // struct cmsghdr: len (size_t), level, type; then the u16
            gsoControls.set(ValueLayout.JAVA_LONG, cm, 16 + 2);
            gsoControls.set(ValueLayout.JAVA_INT, cm + 8, LinuxSockets.SOL_UDP);
            gsoControls.set(ValueLayout.JAVA_INT, cm + 12, LinuxSockets.UDP_SEGMENT);
        }
        gsoSegmentLimit = GSO_ENABLED && segmentationOffload() ? GSO_MAX_BYTES : 0;
    }

    /** CMSG_SPACE(sizeof(uint16_t)) on x86-64 and aarch64. */
    private static final int GSO_CONTROL_SIZE = 24;
    /**
     * Most bytes of datagrams one GSO message carries: the unsegmented packet must be a valid IP
     * packet (64 KiB less the IPv6 and UDP headers, with room to spare).
     */
    static final int GSO_MAX_BYTES = 65_000;
    /**
     * The shortest run sent as one GSO message. A busy ping-pong's reply and the ACK behind it (a run
     * of two) took about 3 µs longer each way as one GSO message than as two messages of one sendmmsg
     * on loopback (the receiving side cuts the packet apart), while in a stream GSO already doubles the
     * datagram rate at four (docs/decisions/0005-udp-send-batching-and-gso.md).
     */
    static final int GSO_MIN_RUN = 4;
    /** -Drdma4j.udp.gso=false turns UDP segmentation offload off (one message per datagram). */
    static final boolean GSO_ENABLED = !"false".equals(System.getProperty("rdma4j.udp.gso"));

    /** Whether this socket may send a run of datagrams as one GSO message (a UDP socket may). */
    boolean segmentationOffload() {
        return true;
    }

    /** Received datagrams carry their TTL/hop limit and TOS/traffic class as control messages. */
    static void askForHopLimitAndClass(LinuxSockets.Call c, int socket, boolean v6) {
        try {
            if (v6) {
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_RECVHOPLIMIT, 1);
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_RECVTCLASS, 1);
            } else {
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IP, LinuxSockets.IP_RECVTTL, 1);
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IP, LinuxSockets.IP_RECVTOS, 1);
            }
        } catch (IOException e) {
            // Without them a UD GRH area shows the defaults (TTL 64, TOS 0).
        }
    }

    /**
     * Multicast leaves by the interface of the local address (on loopback the kernel has no multicast
     * route otherwise) and loops back to groups joined on this host, our own included.
     */
    static void sendMulticastFrom(LinuxSockets.Call c, int socket, boolean v6, byte[] local, int interfaceIndex) {
        try {
            if (v6) {
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_MULTICAST_IF,
                        interfaceIndex);
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IPV6, LinuxSockets.IPV6_MULTICAST_LOOP, 1);
            } else {
                LinuxSockets.setOption(c, socket, LinuxSockets.IPPROTO_IP, LinuxSockets.IP_MULTICAST_IF, local);
                LinuxSockets.setIntOption(c, socket, LinuxSockets.IPPROTO_IP, LinuxSockets.IP_MULTICAST_LOOP, 1);
            }
        } catch (IOException e) {
            // Multicast then goes where the routing table says, if anywhere.
        }
    }

    @Override
    public int receiveBufferBytes() {
        return receiveBufferBytes;
    }

    /** Sets the socket's TTL/hop limit (unicast or multicast) and TOS/traffic class, a setsockopt only on change. */
    @Override
    public void setHopLimitAndClass(boolean multicast, int ttl, int tos) {
        int level = v6 ? LinuxSockets.IPPROTO_IPV6 : LinuxSockets.IPPROTO_IP;
        if (multicast) {
            if (ttl != socketMulticastTtl && LinuxSockets.setIntOption(sendCall, fd, level,
                    v6 ? LinuxSockets.IPV6_MULTICAST_HOPS : LinuxSockets.IP_MULTICAST_TTL, optionScratch, ttl) == 0) {
                socketMulticastTtl = ttl;
            }
        } else if (ttl != socketTtl && LinuxSockets.setIntOption(sendCall, fd, level,
                v6 ? LinuxSockets.IPV6_UNICAST_HOPS : LinuxSockets.IP_TTL, optionScratch, ttl) == 0) {
            socketTtl = ttl;
        }
        if (tos != socketTos && LinuxSockets.setIntOption(sendCall, fd, level,
                v6 ? LinuxSockets.IPV6_TCLASS : LinuxSockets.IP_TOS, optionScratch, tos) == 0) {
            socketTos = tos;
        }
    }

    @Override
    public long send(MemorySegment datagram, int length, byte[] destination, int destinationPort) {
        int salen = LinuxSockets.writeSockaddr(sendAddr, destination, destinationPort);
        long r = LinuxSockets.sendto(sendCall, fd, datagram, length, sendAddr, salen);
        if (r < 0) {
            LinkLog.sendFailed("udp link", (int) -r);
        }
        return r;
    }

    /** The descriptor datagrams leave by (the raw socket's in raw mode). */
    int sendFd() {
        return fd;
    }

    /** The port a destination sockaddr carries (0 for a raw socket). */
    int sockaddrPort(int destinationPort) {
        return destinationPort;
    }

    @Override
    public String sendBatchUnavailable() {
        return sendBatchUnavailable;
    }

    @Override
    public void stage(int slot, MemorySegment datagram, int length, byte[] destination, int destinationPort) {
        int salen = LinuxSockets.writeSockaddr(sendNameAt[slot], destination, sockaddrPort(destinationPort));
        long m = LinuxSockets.MMSGHDR_SIZE * slot;
        long iov = LinuxSockets.IOVEC_SIZE * slot;
        sendIovecs.set(ValueLayout.JAVA_LONG, iov, datagram.address());
        sendIovecs.set(ValueLayout.JAVA_LONG, iov + 8, length);
        sendVector.set(ValueLayout.JAVA_LONG, m, sendNameAt[slot].address());
        sendVector.set(ValueLayout.JAVA_LONG, m + 8, salen); // namelen + padding
        sendVector.set(ValueLayout.JAVA_LONG, m + 16, sendIovecs.address() + iov);
        sendVector.set(ValueLayout.JAVA_LONG, m + 24, 1);
        sendVector.set(ValueLayout.JAVA_LONG, m + 32, 0); // no control messages
        sendVector.set(ValueLayout.JAVA_LONG, m + 40, 0);
        sendVector.set(ValueLayout.JAVA_LONG, m + 48, 0); // flags, msg_len
        sendDatagramAt[slot] = datagram;
        sendLengthAt[slot] = length;
        long high = 0;
        long low = 0;
        for (int i = 0; i < destination.length; i++) {
            if (i < 8) {
                high = high << 8 | (destination[i] & 0xFF);
            } else {
                low = low << 8 | (destination[i] & 0xFF);
            }
        }
        destHighAt[slot] = high;
        destLowAt[slot] = low;
        destPortAt[slot] = destinationPort;
        gsoAllowedAt[slot] = destination.length == 4 ? (destination[0] & 0xF0) != 0xE0 : destination[0] != (byte) 0xFF;
    }

    /**
     * Sends the staged datagrams in one sendmmsg (as few as the kernel allows). Where several in a row
     * go to one unicast destination with one length (the last of them may be shorter), they leave as
     * one message with UDP segmentation offload (UDP_SEGMENT: the kernel builds and routes one packet
     * and cuts it into the datagrams, which the receiver gets one by one, as if sent apart), not one
     * message each: on loopback about 2.5 times the datagrams per second of sendmmsg alone
     * (docs/decisions/0005-udp-send-batching-and-gso.md). A GSO message the kernel refuses is sent
     * again one message per datagram, and GSO stays off from that datagram length up.
     */
    @Override
    public int sendStaged(int from, int count) {
        int messages = sendBatchUnavailable == null && gsoSegmentLimit > 0 ? groupForGso(from, count) : count;
        int sent = messages < count ? sendGrouped(messages) : SendBatches.sendAll(this, from, count);
        for (int i = from; i < from + count; i++) {
            sendDatagramAt[i] = null;
        }
        return sent;
    }

    /**
     * Fills the GSO vector with the messages of staged entries {@code from}..{@code from+count}-1: a
     * run of at least {@link #GSO_MIN_RUN} to one destination, each as long as the first (the last may be shorter), at
     * most {@link #gsoSegmentLimit} long and {@link #GSO_MAX_BYTES} together, is one message; any other
     * datagram a message of its own. Returns how many messages.
     */
    private int groupForGso(int from, int count) {
        int end = from + count;
        int messages = 0;
        for (int i = from; i < end; ) {
            int segment = sendLengthAt[i];
            int k = 1;
            if (segment <= gsoSegmentLimit && gsoAllowedAt[i]) {
                long bytes = segment;
                while (i + k < end && destHighAt[i + k] == destHighAt[i] && destLowAt[i + k] == destLowAt[i]
                        && destPortAt[i + k] == destPortAt[i] && gsoAllowedAt[i + k]
                        && sendLengthAt[i + k] <= segment && bytes + sendLengthAt[i + k] <= GSO_MAX_BYTES) {
                    bytes += sendLengthAt[i + k];
                    k++;
                    if (sendLengthAt[i + k - 1] < segment) {
                        break; // a shorter datagram ends the run
                    }
                }
                if (k < GSO_MIN_RUN) {
                    k = 1; // too short to pay: a message per datagram
                }
            }
            long m = LinuxSockets.MMSGHDR_SIZE * messages;
            long sent = LinuxSockets.MMSGHDR_SIZE * i;
            gsoVector.set(ValueLayout.JAVA_LONG, m, sendVector.get(ValueLayout.JAVA_LONG, sent)); // name
            gsoVector.set(ValueLayout.JAVA_LONG, m + 8, sendVector.get(ValueLayout.JAVA_LONG, sent + 8)); // namelen
            gsoVector.set(ValueLayout.JAVA_LONG, m + 16, sendIovecs.address() + LinuxSockets.IOVEC_SIZE * i);
            gsoVector.set(ValueLayout.JAVA_LONG, m + 24, k);
            if (k > 1) {
                long c = GSO_CONTROL_SIZE * messages;
                gsoControls.set(ValueLayout.JAVA_SHORT, c + 16, (short) segment);
                gsoVector.set(ValueLayout.JAVA_LONG, m + 32, gsoControls.address() + c);
                gsoVector.set(ValueLayout.JAVA_LONG, m + 40, GSO_CONTROL_SIZE);
            } else {
                gsoVector.set(ValueLayout.JAVA_LONG, m + 32, 0);
                gsoVector.set(ValueLayout.JAVA_LONG, m + 40, 0);
            }
            gsoVector.set(ValueLayout.JAVA_LONG, m + 48, 0);
            messageFirst[messages] = i;
            messageCount[messages] = k;
            messages++;
            i += k;
        }
        return messages;
    }

    /**
     * Sends the GSO vector's {@code messages} as {@link SendBatches#sendAll} sends entries (what the call
     * did not send is sent again from where it stopped; a failed message is dropped, EINTR retried), but
     * a refused GSO message goes again one datagram per message. Returns the datagrams sent.
     */
    private int sendGrouped(int messages) {
        int sent = 0;
        int at = 0;
        int interrupted = 0;
        while (at < messages) {
            sendBatchCalls++;
            int r = LinuxSockets.sendmmsg(sendCall, sendFd(), gsoVectorAt[at], messages - at);
            if (r > 0) {
                for (int j = at; j < at + Math.min(r, messages - at); j++) {
                    sent += messageCount[j];
                    if (messageCount[j] > 1) {
                        gsoMessages++;
                        gsoDatagrams += messageCount[j];
                    }
                }
                at += Math.min(r, messages - at);
                interrupted = 0;
            } else if (r == -LinuxSockets.EINTR && ++interrupted <= SendBatches.EINTR_RETRIES) {
                continue;
            } else {
                int k = messageCount[at];
                if (k > 1 && (r == -LinuxSockets.EINVAL || r == -LinuxSockets.EIO || r == -LinuxSockets.EMSGSIZE)) {
                    int segment = sendLengthAt[messageFirst[at]];
                    gsoSegmentLimit = Math.min(gsoSegmentLimit, segment - 1);
                    System.getLogger(LinkLog.CATEGORY).log(System.Logger.Level.DEBUG,
                            "udp socket: GSO of " + k + " datagrams of " + segment + " bytes refused (errno " + -r
                                    + "): none from " + segment + " bytes up");
                    sent += SendBatches.sendAll(this, messageFirst[at], k);
                }
                LinkLog.sendFailed("udp link", -r);
                at++; // else this message failed: dropped, the next ones still go
                interrupted = 0;
            }
        }
        return sent;
    }

    @Override
    public long gsoMessages() {
        return gsoMessages;
    }

    @Override
    public long gsoDatagrams() {
        return gsoDatagrams;
    }

    @Override
    public void stopSendBatching(String reason) {
        sendBatchUnavailable = reason;
    }

    @Override
    public long sendBatchCalls() {
        return sendBatchCalls;
    }

    /**
     * One sendmmsg from staged entry {@code from}; where the kernel has none (ENOSYS), batching stops
     * for good (the reason is kept) and the entry goes by sendto.
     */
    @Override
    public int sendFrom(int from, int count) {
        if (sendBatchUnavailable == null) {
            sendBatchCalls++;
            int r = LinuxSockets.sendmmsg(sendCall, sendFd(), sendVectorAt[from], count);
            if (r != -LinuxSockets.ENOSYS) {
                return r;
            }
            stopSendBatching("sendmmsg failed with ENOSYS (kernel without it): one sendto per datagram");
            System.getLogger(LinkLog.CATEGORY).log(System.Logger.Level.DEBUG, sendBatchUnavailable);
        }
        long r = LinuxSockets.sendto(sendCall, sendFd(), sendDatagramAt[from], sendLengthAt[from],
                sendNameAt[from], (int) sendVector.get(ValueLayout.JAVA_INT, LinuxSockets.MMSGHDR_SIZE * from + 8));
        return r < 0 ? (int) r : 1;
    }

    @Override
    public int receive(UdpDatagrams datagrams, UdpDatagrams.Scratch scratch) {
        return receive(datagrams, scratch, LinuxSockets.MSG_WAITFORONE);
    }

    @Override
    public int receiveNow(UdpDatagrams datagrams, UdpDatagrams.Scratch scratch) {
        return receive(datagrams, scratch, LinuxSockets.MSG_DONTWAIT);
    }

    @Override
    public boolean canReceiveNow() {
        return true;
    }

    @Override
    public boolean awaitReadable(int timeoutMs) {
        return awaitReadable(receiveCall, pollFd, timeoutMs);
    }

    @Override
    public boolean agentAwaitReadable(int timeoutMs) {
        return awaitReadable(agentCall, agentPollFd, timeoutMs);
    }

    private boolean awaitReadable(LinuxSockets.Call call, MemorySegment fds, int timeoutMs) {
        if (closed) {
            return false;
        }
        fds.set(ValueLayout.JAVA_INT, 0, fd);
        fds.set(ValueLayout.JAVA_SHORT, 4, LinuxSockets.POLLIN); // events
        fds.set(ValueLayout.JAVA_SHORT, 6, (short) 0); // revents
        return LinuxSockets.poll(call, fds, 1, timeoutMs) > 0;
    }

    @Override
    public void wakeReceiver() {
        synchronized (wakeCall) {
            if (!closed) {
                LinuxSockets.sendto(wakeCall, fd, wakeAddr, 0, wakeAddr, wakeAddrLength);
            }
        }
    }

    private int receive(UdpDatagrams datagrams, UdpDatagrams.Scratch scratch, int flags) {
        if (closed) {
            return 0;
        }
        // Only the entries the last call filled need new packets (a receive fills a prefix): a poll
        // that finds nothing costs one recvmmsg, not a rebuilt vector.
        for (int i = 0; i < unprepared; i++) {
            if (slots[i] == null) {
                slots[i] = pool.acquire();
            }
            long m = LinuxSockets.MMSGHDR_SIZE * i;
            long iov = LinuxSockets.IOVEC_SIZE * i;
            iovecs.set(ValueLayout.JAVA_LONG, iov, slots[i].buffer.address());
            iovecs.set(ValueLayout.JAVA_LONG, iov + 8, Packet.BUFFER_SIZE);
            vector.set(ValueLayout.JAVA_LONG, m, names.address() + LinuxSockets.SOCKADDR_SIZE * i);
            vector.set(ValueLayout.JAVA_LONG, m + 8, LinuxSockets.SOCKADDR_SIZE); // namelen + padding
            vector.set(ValueLayout.JAVA_LONG, m + 16, iovecs.address() + iov);
            vector.set(ValueLayout.JAVA_LONG, m + 24, 1);
            vector.set(ValueLayout.JAVA_LONG, m + 32, controls.address() + UdpDatagrams.CONTROL_SIZE * i);
            vector.set(ValueLayout.JAVA_LONG, m + 40, UdpDatagrams.CONTROL_SIZE);
            vector.set(ValueLayout.JAVA_LONG, m + 48, 0); // flags, msg_len
        }
        unprepared = 0;
        int n = LinuxSockets.recvmmsg(receiveCall, fd, vector, BATCH, flags);
        if (n <= 0) {
            return 0; // nothing queued (EAGAIN), the timeout to re-check for close, or EINTR
        }
        unprepared = n;
        for (int i = 0; i < n; i++) {
            long m = LinuxSockets.MMSGHDR_SIZE * i;
            int len = vector.get(ValueLayout.JAVA_INT, m + 56);
            int msgFlags = vector.get(ValueLayout.JAVA_INT, m + 48);
            Packet p = slots[i];
            slots[i] = null;
            UdpDatagrams.readHopLimitAndClass(controls, UdpDatagrams.CONTROL_SIZE * i,
                    vector.get(ValueLayout.JAVA_LONG, m + 40), p);
            datagrams.deliver(p, len, (msgFlags & 0x20) != 0, names, LinuxSockets.SOCKADDR_SIZE * i, scratch); // MSG_TRUNC
        }
        datagrams.endBatch();
        return n;
    }

    @Override
    public long socketDrops() {
        if (!closed) {
            long d = LinuxSockets.socketDrops(fd);
            if (d > drops) {
                drops = d;
            }
        }
        return drops;
    }

    @Override
    public void interruptReceive() {
        socketDrops(); // keep the last count: the descriptor goes away with the receive thread
        // the receive timeout (100 ms) ends a recvmmsg in progress
    }

    @Override
    public void close() {
        socketDrops();
        closed = true;
        for (int i = 0; i < slots.length; i++) {
            if (slots[i] != null) {
                slots[i].release();
                slots[i] = null;
            }
        }
        LinuxSockets.close(fd);
    }
}
