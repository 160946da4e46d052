package org.rdma4j.tools.cmutils;

import java.io.PrintWriter;
import java.net.InetAddress;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/**
 * What rdmacm-utils' commands share here: the soft UDP device made for an address no device has (as
 * {@code rdma4j rping} does), and C's {@code perror} lines for a failed step.
 */
final class CmUtil {
    /** Linux errno values {@link Errno} does not name. */
    static final int EADDRNOTAVAIL = 99;
    static final int ENETUNREACH = 101;
    static final int ECONNRESET = 104;
    static final int EHOSTUNREACH = 113;

    private CmUtil() {
    }

    /**
     * The soft UDP device to make, if one is needed: with {@code --bind} always; else on {@code local}
     * when it is a specific address no device has as a GID. Returns the device made (to release), or
     * null when the existing devices serve.
     */
    static Device deviceFor(DeviceOptions devices, InetAddress local) {
        if (devices.bindAddress() == null) {
            if (local == null || local.isAnyLocalAddress() || hasGid(Gid.of(local))) {
                return null; // the connection manager picks among the devices there are
            }
            devices.bind(local);
        }
        for (int i = 0; ; i++) { // the first free udpN (a server and a client in one JVM, as in the tests)
            String name = "udp" + i;
            if (Verbs.devices().stream().anyMatch(d -> d.name().equals(name))) {
                continue;
            }
            try {
                return devices.resolve(name);
            } catch (VerbsException e) {
                if (e.errno() != Errno.EEXIST || i > 64) {
                    throw e;
                }
            }
        }
    }

    /**
     * Removes the device {@link #deviceFor} made, if any. The connection manager may still hold it (an
     * id in time wait): then it stays until the process ends, said only with {@code verbose}.
     */
    static void release(DeviceOptions devices, Device made, PrintWriter err, boolean verbose) {
        if (made != null) {
            try {
                devices.release();
            } catch (VerbsException e) {
                if (verbose) {
                    err.println("rdma4j: the soft device " + made.name() + " stays: " + e.getMessage());
                }
            }
        }
    }

    private static boolean hasGid(Gid gid) {
        for (Device d : Verbs.devices()) {
            try (Context ctx = d.open()) {
                int ports = ctx.queryDevice().physPortCnt();
                for (int p = 1; p <= ports; p++) {
                    int n = ctx.queryPort(p).gidTblLen();
                    for (int i = 0; i < n; i++) {
                        try {
                            if (gid.equals(ctx.queryGid(p, i))) {
                                return true;
                            }
                        } catch (VerbsException e) {
                            // an empty entry
                        }
                    }
                }
            } catch (VerbsException e) {
                // a device that cannot be opened does not have it
            }
        }
        return false;
    }

    /**
     * C's {@code perror(what)} for a failed step: {@code "what: strerror(errno)"} on stderr, then
     * rdma4j's own account of it ({@code "rdma4j: ..."}) on a second line.
     */
    static void perror(PrintWriter err, String what, Throwable t) {
        int errno = t instanceof VerbsException ve ? ve.errno() : Errno.EIO;
        err.println(what + ": " + strerror(errno));
        if (t.getMessage() != null) {
            err.println("rdma4j: " + t.getMessage());
        }
        err.flush();
    }

    /** glibc's text of {@code errno} for the values a connection step reports. */
    static String strerror(int errno) {
        return switch (errno) {
            case Errno.EPERM -> "Operation not permitted";
            case Errno.ENOENT -> "No such file or directory";
            case Errno.EIO -> "Input/output error";
            case Errno.EBADF -> "Bad file descriptor";
            case Errno.EAGAIN -> "Resource temporarily unavailable";
            case Errno.ENOMEM -> "Cannot allocate memory";
            case Errno.EACCES -> "Permission denied";
            case Errno.EBUSY -> "Device or resource busy";
            case Errno.EEXIST -> "File exists";
            case Errno.ENODEV -> "No such device";
            case Errno.EINVAL -> "Invalid argument";
            case Errno.ENOSPC -> "No space left on device";
            case Errno.ENOSYS -> "Function not implemented";
            case Errno.ENODATA -> "No data available";
            case Errno.EPROTO -> "Protocol error";
            case Errno.EOPNOTSUPP -> "Operation not supported";
            case Errno.EADDRINUSE -> "Address already in use";
            case EADDRNOTAVAIL -> "Cannot assign requested address";
            case ENETUNREACH -> "Network is unreachable";
            case ECONNRESET -> "Connection reset by peer";
            case Errno.ETIMEDOUT -> "Connection timed out";
            case Errno.ECONNREFUSED -> "Connection refused";
            case EHOSTUNREACH -> "No route to host";
            default -> "Unknown error " + errno;
        };
    }
}
