// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteOrder;
import org.rdma4j.verbs.spi.ffm.ErrnoCapture;
import org.rdma4j.verbs.spi.ffm.NativeLibrary;

/**
 * The few libc socket calls the UDP link needs, through {@code java.lang.foreign}: socket, bind,
 * setsockopt, getsockopt, sendto, recvmmsg, poll and close, each reporting errno. The lookup, downcall
 * and errno capture are the shared plumbing of {@code org.rdma4j.verbs.spi.ffm}; this class keeps only
 * the socket calls, their constants and struct layouts. Linux x86-64/aarch64 only; check
 * {@link #isAvailable()}. Thread safe (stateless).
 */
public final class LinuxSockets {
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;
    static final int SOCK_DGRAM = 2;
    static final int SOCK_RAW = 3;
    static final int IPPROTO_UDP = 17;
    static final int IPPROTO_RAW = 255;
    static final int IPPROTO_IPV6 = 41;
    static final int SOL_SOCKET = 1;
    static final int SO_REUSEADDR = 2;
    static final int SO_SNDBUF = 7;
    static final int SO_RCVBUF = 8;
    static final int SO_RCVTIMEO = 20;
    /** Like SO_SNDBUF/SO_RCVBUF but past net.core.[wr]mem_max; needs CAP_NET_ADMIN. */
    static final int SO_SNDBUFFORCE = 32;
    static final int SO_RCVBUFFORCE = 33;
    /** struct sk_meminfo as u32[SK_MEMINFO_VARS]; index SK_MEMINFO_DROPS counts receive-queue drops. */
    static final int SO_MEMINFO = 55;
    private static final int SK_MEMINFO_VARS = 9;
    private static final int SK_MEMINFO_DROPS = 8;
    static final int IPV6_V6ONLY = 26;
    static final int SOL_UDP = 17;
    /** Accept IPv6 UDP datagrams with a zero checksum, as Linux rxe sends them. */
    static final int UDP_NO_CHECK6_RX = 102;
    /** UDP generic segmentation offload (Linux 4.18): a cmsg with the segment size, a u16. */
    static final int UDP_SEGMENT = 103;
    static final int IPPROTO_IP = 0;
    static final int IP_TOS = 1;
    static final int IP_TTL = 2;
    static final int IP_RECVTTL = 12;
    static final int IP_RECVTOS = 13;
    static final int IP_MULTICAST_IF = 32;
    static final int IP_MULTICAST_TTL = 33;
    static final int IP_MULTICAST_LOOP = 34;
    static final int IP_ADD_MEMBERSHIP = 35;
    static final int IP_DROP_MEMBERSHIP = 36;
    static final int IP_MULTICAST_ALL = 49;
    static final int IPV6_UNICAST_HOPS = 16;
    static final int IPV6_MULTICAST_IF = 17;
    static final int IPV6_MULTICAST_HOPS = 18;
    static final int IPV6_MULTICAST_LOOP = 19;
    static final int IPV6_JOIN_GROUP = 20;
    static final int IPV6_LEAVE_GROUP = 21;
    static final int IPV6_RECVHOPLIMIT = 51;
    static final int IPV6_HOPLIMIT = 52;
    static final int IPV6_RECVTCLASS = 66;
    static final int IPV6_TCLASS = 67;
    static final int IPV6_MULTICAST_ALL = 29;
    static final short POLLIN = 1;
    static final int EAGAIN = 11;
    static final int EINTR = 4;
    static final int ENOSYS = 38;
    static final int EIO = 5;
    static final int EINVAL = 22;
    static final int EMSGSIZE = 90;

    private static final ValueLayout.OfShort BE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private static final Throwable UNAVAILABLE;
    private static final MethodHandle SOCKET;
    private static final MethodHandle BIND;
    private static final MethodHandle SETSOCKOPT;
    private static final MethodHandle GETSOCKOPT;
    private static final MethodHandle SENDTO;
    private static final MethodHandle RECVMMSG;
    /** Null where libc has no sendmmsg (then {@link #sendmmsgUnavailable()} says why). */
    private static final MethodHandle SENDMMSG;
    private static final String SENDMMSG_UNAVAILABLE;
    private static final MethodHandle CLOSE;
    private static final MethodHandle POLL;

    /** struct mmsghdr: struct msghdr (56 bytes) + unsigned int msg_len, padded to 64. */
    static final long MMSGHDR_SIZE = 64;
    /** struct iovec. */
    static final long IOVEC_SIZE = 16;
    /** Room for a sockaddr_in6. */
    public static final long SOCKADDR_SIZE = 28;

    static {
        Throwable cause = null;
        MethodHandle socket = null;
        MethodHandle bind = null;
        MethodHandle setsockopt = null;
        MethodHandle getsockopt = null;
        MethodHandle sendto = null;
        MethodHandle recvmmsg = null;
        MethodHandle close = null;
        MethodHandle poll = null;
        MethodHandle sendmmsg = null;
        String sendmmsgUnavailable = null;
        try {
            NativeLibrary libc = NativeLibrary.libc();
            socket = libc.downcallWithErrno("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
            bind = libc.downcallWithErrno("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
            setsockopt = libc.downcallWithErrno("setsockopt",
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
            getsockopt = libc.downcallWithErrno("getsockopt",
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
            sendto = libc.downcallWithErrno("sendto",
                    FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
            recvmmsg = libc.downcallWithErrno("recvmmsg",
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS));
            close = libc.downcall("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
            poll = libc.downcallWithErrno("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
            try {
                sendmmsg = libc.downcallWithErrno("sendmmsg",
                        FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
            } catch (Throwable t) {
                sendmmsgUnavailable = "libc has no sendmmsg: " + t;
            }
        } catch (Throwable t) {
            cause = t;
        }
        SENDMMSG = sendmmsg;
        SENDMMSG_UNAVAILABLE = cause != null ? "libc sockets unavailable: " + cause : sendmmsgUnavailable;
        UNAVAILABLE = cause;
        SOCKET = socket;
        BIND = bind;
        SETSOCKOPT = setsockopt;
        GETSOCKOPT = getsockopt;
        SENDTO = sendto;
        RECVMMSG = recvmmsg;
        CLOSE = close;
        POLL = poll;
    }

    private LinuxSockets() {}

    static boolean isAvailable() {
        return UNAVAILABLE == null;
    }

    /** Why libc sockets cannot be used here, or null. */
    static Throwable unavailabilityCause() {
        return UNAVAILABLE;
    }

    /** Per-thread state for calls: the errno capture buffer. */
    static final class Call {
        private final ErrnoCapture capture = new ErrnoCapture();
        final MemorySegment state = capture.segment();

        int errno() {
            return capture.errno();
        }
    }

    static int socket(Call c, int family, int type, int protocol) throws IOException {
        int fd = (int) invoke(() -> (int) SOCKET.invokeExact(c.state, family, type, protocol));
        if (fd < 0) {
            throw error("socket", c.errno());
        }
        return fd;
    }

    static void bind(Call c, int fd, MemorySegment sockaddr, int length) throws IOException {
        int r = (int) invoke(() -> (int) BIND.invokeExact(c.state, fd, sockaddr, length));
        if (r < 0) {
            throw error("bind", c.errno());
        }
    }

    static void setIntOption(Call c, int fd, int level, int option, int value) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = a.allocate(JAVA_INT);
            v.set(JAVA_INT, 0, value);
            int r = (int) invoke(() -> (int) SETSOCKOPT.invokeExact(c.state, fd, level, option, v, 4));
            if (r < 0) {
                throw error("setsockopt(" + level + ", " + option + ")", c.errno());
            }
        }
    }

    /** setsockopt with raw bytes (a struct such as ip_mreq), control path. */
    static void setOption(Call c, int fd, int level, int option, byte[] value) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = a.allocate(value.length, 8);
            MemorySegment.copy(value, 0, v, ValueLayout.JAVA_BYTE, 0, value.length);
            int r = (int) invoke(() -> (int) SETSOCKOPT.invokeExact(c.state, fd, level, option, v, value.length));
            if (r < 0) {
                throw error("setsockopt(" + level + ", " + option + ")", c.errno());
            }
        }
    }

    /** setsockopt of an int through caller-owned scratch (4 bytes): allocation free; 0 or -errno. */
    static int setIntOption(Call c, int fd, int level, int option, MemorySegment scratch, int value) {
        scratch.set(JAVA_INT, 0, value);
        try {
            int r = (int) SETSOCKOPT.invokeExact(c.state, fd, level, option, scratch, 4);
            return r < 0 ? -c.errno() : 0;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** poll(2) over a pollfd array of {@code n} entries; ready count, 0 on timeout, or -errno. */
    static int poll(Call c, MemorySegment fds, int n, int timeoutMs) {
        try {
            int r = (int) POLL.invokeExact(c.state, fds, (long) n, timeoutMs);
            return r < 0 ? -c.errno() : r;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static int getIntOption(Call c, int fd, int level, int option) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = a.allocate(JAVA_INT);
            MemorySegment len = a.allocate(JAVA_INT);
            len.set(JAVA_INT, 0, 4);
            int r = (int) invoke(() -> (int) GETSOCKOPT.invokeExact(c.state, fd, level, option, v, len));
            if (r < 0) {
                throw error("getsockopt(" + level + ", " + option + ")", c.errno());
            }
            return v.get(JAVA_INT, 0);
        }
    }

    /** Datagrams the kernel dropped for this socket (receive queue full, and the like); -1 if unknown. */
    static long socketDrops(int fd) {
        Call c = new Call();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = a.allocate(JAVA_INT, SK_MEMINFO_VARS + 1);
            MemorySegment len = a.allocate(JAVA_INT);
            len.set(JAVA_INT, 0, (int) v.byteSize());
            int r = (int) invoke(() -> (int) GETSOCKOPT.invokeExact(c.state, fd, SOL_SOCKET, SO_MEMINFO, v, len));
            if (r < 0 || len.get(JAVA_INT, 0) < (SK_MEMINFO_DROPS + 1) * 4) {
                return -1;
            }
            return Integer.toUnsignedLong(v.getAtIndex(JAVA_INT, SK_MEMINFO_DROPS));
        } catch (IOException e) {
            return -1;
        }
    }

    /**
     * Sets a socket buffer size: past the sysctl limit with the FORCE option where the process may
     * (CAP_NET_ADMIN), else as far as the limit allows. Returns the size the kernel reports afterwards.
     */
    static int setBufferSize(Call c, int fd, int option, int forceOption, int bytes) throws IOException {
        try {
            setIntOption(c, fd, SOL_SOCKET, forceOption, bytes);
        } catch (IOException notPermitted) {
            setIntOption(c, fd, SOL_SOCKET, option, bytes);
        }
        return getIntOption(c, fd, SOL_SOCKET, option);
    }

    /** SO_RCVTIMEO, so a blocked receive wakes up to notice a close. */
    static void setReceiveTimeout(Call c, int fd, long micros) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment tv = a.allocate(16, 8);
            tv.set(JAVA_LONG, 0, micros / 1_000_000);
            tv.set(JAVA_LONG, 8, micros % 1_000_000);
            int r = (int) invoke(() -> (int) SETSOCKOPT.invokeExact(c.state, fd, SOL_SOCKET, SO_RCVTIMEO, tv, 16));
            if (r < 0) {
                throw error("setsockopt(SO_RCVTIMEO)", c.errno());
            }
        }
    }

    /** sendto; returns bytes sent or -errno. Allocation free. */
    static long sendto(Call c, int fd, MemorySegment buf, long length, MemorySegment sockaddr, int addrLength) {
        try {
            long r = (long) SENDTO.invokeExact(c.state, fd, buf, length, 0, sockaddr, addrLength);
            return r < 0 ? -c.errno() : r;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Why {@link #sendmmsg} cannot be used here, or null when it can. */
    static String sendmmsgUnavailable() {
        return SENDMMSG_UNAVAILABLE;
    }

    /**
     * sendmmsg over the first {@code count} prepared mmsghdr entries at {@code vector}: returns how many were sent (the first ones; fewer than asked when one failed, whose error the
     * next call reports) or -errno when the first failed. Allocation free.
     */
    static int sendmmsg(Call c, int fd, MemorySegment vector, int count) {
        try {
            int r = (int) SENDMMSG.invokeExact(c.state, fd, vector, count, 0);
            return r < 0 ? -c.errno() : r;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Return after the first datagram instead of waiting to fill the whole vector. */
    static final int MSG_WAITFORONE = 0x10000;
    /** Never block: take what is queued (EAGAIN when nothing is). */
    static final int MSG_DONTWAIT = 0x40;

    /**
     * recvmmsg into a prepared mmsghdr vector: blocks for the first datagram (up to SO_RCVTIMEO), then
     * takes whatever else is queued. Returns datagrams received or -errno. Allocation free.
     */
    static int recvmmsg(Call c, int fd, MemorySegment vector, int count) {
        return recvmmsg(c, fd, vector, count, MSG_WAITFORONE);
    }

    /** As above with {@code flags}: {@link #MSG_DONTWAIT} takes only what is queued now, never blocks. */
    static int recvmmsg(Call c, int fd, MemorySegment vector, int count, int flags) {
        try {
            int r = (int) RECVMMSG.invokeExact(c.state, fd, vector, count, flags, MemorySegment.NULL);
            return r < 0 ? -c.errno() : r;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static void close(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            // nothing to do: the descriptor is gone either way
        }
    }

    /** Writes a sockaddr_in or sockaddr_in6 for {@code addr} (4 or 16 bytes) and port; returns its length. */
    public static int writeSockaddr(MemorySegment sa, byte[] addr, int port) {
        sa.fill((byte) 0);
        if (addr.length == 4) {
            sa.set(ValueLayout.JAVA_SHORT, 0, (short) AF_INET);
            sa.set(BE_SHORT, 2, (short) port);
            MemorySegment.copy(addr, 0, sa, ValueLayout.JAVA_BYTE, 4, 4);
            return 16;
        }
        sa.set(ValueLayout.JAVA_SHORT, 0, (short) AF_INET6);
        sa.set(BE_SHORT, 2, (short) port);
        MemorySegment.copy(addr, 0, sa, ValueLayout.JAVA_BYTE, 8, 16);
        return 28;
    }

    /** The family of a sockaddr. */
    static int family(MemorySegment sa) {
        return sa.get(ValueLayout.JAVA_SHORT, 0);
    }

    static int port(MemorySegment sa, long at) {
        return sa.get(BE_SHORT, at + 2) & 0xFFFF;
    }

    private interface NativeCall {
        long call() throws Throwable;
    }

    private static long invoke(NativeCall call) throws IOException {
        if (UNAVAILABLE != null) {
            throw new IOException("libc sockets unavailable", UNAVAILABLE);
        }
        try {
            return call.call();
        } catch (Error | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(t);
        }
    }

    private static IOException error(String what, int errno) {
        return new IOException(what + " failed: errno " + errno + switch (errno) {
            case 1 -> " (EPERM: raw sockets need CAP_NET_RAW)";
            case 13 -> " (EACCES)";
            case 98 -> " (EADDRINUSE: another process owns the port)";
            case 99 -> " (EADDRNOTAVAIL: no such local address)";
            case 97 -> " (EAFNOSUPPORT)";
            default -> "";
        });
    }
}
