// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

/**
 * The Linux errno values the verbs API reports ({@link VerbsException#errno()}), as a C program calling
 * libibverbs (or librdmacm, for the connection manager) would see them. Values are those of Linux on
 * x86-64 and aarch64. The typical verbs meanings are given; a provider may pass on others it receives
 * from the kernel.
 */
public final class Errno {
    /** Operation not permitted (1): e.g. a controlled Q_Key (bit 31) without privilege. */
    public static final int EPERM = 1;
    /** No such file or directory (2): something named does not exist, e.g. a host name (CM). */
    public static final int ENOENT = 2;
    /** Input/output error (5): the device failed; also {@link CqPoller#takeSuccess} for an error completion. */
    public static final int EIO = 5;
    /** Bad file descriptor (9): a blocking call on a channel, context or poller that is closed (S-LIFE-2). */
    public static final int EBADF = 9;
    /** Try again (11): the resource is temporarily unavailable. */
    public static final int EAGAIN = 11;
    /** Out of memory (12): a full send, receive or shared receive queue (S-POST-2), too many attachments. */
    public static final int ENOMEM = 12;
    /** Permission denied (13): e.g. read-only memory registered with LOCAL_WRITE. */
    public static final int EACCES = 13;
    /** Bad address (14): memory that is not mapped, e.g. a closed arena's (S-LIFE-1). */
    public static final int EFAULT = 14;
    /** Device or resource busy (16): a resource still in use cannot be closed (S-PD-2, S-LIFE-4). */
    public static final int EBUSY = 16;
    /** File exists (17): registered or created already (a device name, an event poller's source). */
    public static final int EEXIST = 17;
    /** No such device (19): no provider or device of that name, or an unavailable provider. */
    public static final int ENODEV = 19;
    /** Invalid argument (22): the common refusal of a verb (bad attribute, mask, state or size). */
    public static final int EINVAL = 22;
    /** No space left on device (28). */
    public static final int ENOSPC = 28;
    /** Function not implemented (38). */
    public static final int ENOSYS = 38;
    /** No data available (61): an empty GID table entry (S-DEV-3). */
    public static final int ENODATA = 61;
    /** Protocol error (71). */
    public static final int EPROTO = 71;
    /** Protocol not supported (93): e.g. a GRH area holding neither an IPv4 nor an IPv6 header. */
    public static final int EPROTONOSUPPORT = 93;
    /** Operation not supported (95): a feature the provider or device lacks. */
    public static final int EOPNOTSUPP = 95;
    /** Address family not supported (97). */
    public static final int EAFNOSUPPORT = 97;
    /** Address already in use (98): e.g. a device address or CM port taken. */
    public static final int EADDRINUSE = 98;
    /** Cannot assign requested address (99): no device has the address asked for. */
    public static final int EADDRNOTAVAIL = 99;
    /** Network is unreachable (101). */
    public static final int ENETUNREACH = 101;
    /** Connection reset by peer (104). */
    public static final int ECONNRESET = 104;
    /** Connection refused (111): the peer rejected the connection or nobody listens. */
    public static final int ECONNREFUSED = 111;
    /** Connection timed out (110): a wait with a timeout ended without the answer ({@link CqPoller#take}). */
    public static final int ETIMEDOUT = 110;
    /** No route to host (113). */
    public static final int EHOSTUNREACH = 113;
    /** The kernel's internal ENOTSUPP (not a libc errno), which rdma_cm passes up, e.g. for an IPv6 group on RoCE. */
    public static final int ENOTSUPP = 524;

    private Errno() {}

    /**
     * The symbolic name of an errno value.
     *
     * @param errno the value
     * @return e.g. {@code "EINVAL"}; for a value not defined here {@code "E?"} and the number
     */
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
