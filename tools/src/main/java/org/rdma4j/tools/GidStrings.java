package org.rdma4j.tools;

import org.rdma4j.verbs.Gid;

/**
 * The textual GID forms of {@link GidText} for commands in other packages of this module (pingpong
 * prints GIDs the way {@code inet_ntop(AF_INET6)} does, as the rdma-core examples do).
 */
public final class GidStrings {
    private GidStrings() {}

    /** {@code inet_ntop(AF_INET6, gid)} as glibc prints it, e.g. {@code fe80::202:c9ff:fe00:1234}. */
    public static String inetNtop(Gid gid) {
        return GidText.inetNtop(gid);
    }
}
