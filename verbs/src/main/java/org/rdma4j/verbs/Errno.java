// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/** The Linux errno values the verbs API reports, as a C program calling libibverbs would see them. */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EIO = 5;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int ENOSYS = 38;
    public static final int ENODATA = 61;
    public static final int EPROTO = 71;
    public static final int EPROTONOSUPPORT = 93;
    public static final int EOPNOTSUPP = 95;
    public static final int EAFNOSUPPORT = 97;
    public static final int EADDRINUSE = 98;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ENETUNREACH = 101;
    public static final int ECONNRESET = 104;
    public static final int ECONNREFUSED = 111;
    public static final int ETIMEDOUT = 110;
    public static final int EHOSTUNREACH = 113;
    /** The kernel's internal ENOTSUPP (not a libc errno), which rdma_cm passes up, e.g. for an IPv6 group on RoCE. */
    public static final int ENOTSUPP = 524;

    private Errno() {}

    /** The symbolic name of an errno value, e.g. {@code "EINVAL"}; {@code "E?<n>"} for unknown values. */
    public static String name(int errno) {
        return switch (errno) {
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case EIO -> "EIO";
            case EBADF -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EFAULT -> "EFAULT";
            case EBUSY -> "EBUSY";
            case EEXIST -> "EEXIST";
            case ENODEV -> "ENODEV";
            case EINVAL -> "EINVAL";
            case ENOSPC -> "ENOSPC";
            case ENOSYS -> "ENOSYS";
            case ENODATA -> "ENODATA";
            case EPROTO -> "EPROTO";
            case EPROTONOSUPPORT -> "EPROTONOSUPPORT";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            case EAFNOSUPPORT -> "EAFNOSUPPORT";
            case EADDRINUSE -> "EADDRINUSE";
            case EADDRNOTAVAIL -> "EADDRNOTAVAIL";
            case ENETUNREACH -> "ENETUNREACH";
            case ECONNRESET -> "ECONNRESET";
            case ECONNREFUSED -> "ECONNREFUSED";
            case ETIMEDOUT -> "ETIMEDOUT";
            case EHOSTUNREACH -> "EHOSTUNREACH";
            case ENOTSUPP -> "ENOTSUPP";
            default -> "E?" + errno;
        };
    }
}
