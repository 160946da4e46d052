// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cmutils;

import java.io.PrintWriter;
import org.rdma4j.tools.device.CmDevices;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
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
     * Removes the device {@link CmDevices#softDeviceFor} made, if any. The connection manager may still hold it (an
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
