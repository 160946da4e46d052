// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.device;

import org.rdma4j.verbs.Gid;

/**
 * The two textual forms ibv_devinfo uses for a GID (shared by the commands of every package here): RoCE v2 GIDs are IP addresses and are printed the
 * way glibc's {@code inet_ntop(AF_INET6)} prints them ({@code fe80::202:c9ff:fe00:1234},
 * {@code ::ffff:192.168.1.7}); IB and RoCE v1 GIDs as eight groups of four hex digits.
 */
public final class GidText {
    private GidText() {}

    /** Eight colon-separated groups of four hex digits, as ibv_devinfo prints IB and RoCE v1 GIDs. */
    public static String full(Gid gid) {
        return gid.toString();
    }

    /**
     * {@code inet_ntop(AF_INET6, ...)} as glibc does it: the longest run (the first one on a tie) of at
     * least two zero groups becomes "::", groups lose their leading zeros, and an IPv4-mapped
     * ({@code ::ffff:a.b.c.d}) or IPv4-compatible ({@code ::a.b.c.d}) address ends in dotted decimal.
     */
    public static String inetNtop(Gid gid) {
        int[] words = new int[8];
        for (int i = 0; i < 8; i++) {
            words[i] = (gid.byteAt(2 * i) & 0xff) << 8 | (gid.byteAt(2 * i + 1) & 0xff);
        }
        int bestBase = -1;
        int bestLen = 0;
        int curBase = -1;
        int curLen = 0;
        for (int i = 0; i <= 8; i++) {
            if (i < 8 && words[i] == 0) {
                if (curBase == -1) {
                    curBase = i;
                    curLen = 1;
                } else {
                    curLen++;
                }
            } else if (curBase != -1) {
                if (bestBase == -1 || curLen > bestLen) {
                    bestBase = curBase;
                    bestLen = curLen;
                }
                curBase = -1;
            }
        }
        if (bestBase != -1 && bestLen < 2) {
            bestBase = -1;
        }
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (bestBase != -1 && i >= bestBase && i < bestBase + bestLen) {
                if (i == bestBase) {
                    sb.append(':');
                }
                continue;
            }
            if (i != 0) {
                sb.append(':');
            }
            if (i == 6 && bestBase == 0 && (bestLen == 6 || (bestLen == 5 && words[5] == 0xffff))) {
                sb.append(gid.byteAt(12) & 0xff).append('.').append(gid.byteAt(13) & 0xff).append('.')
                        .append(gid.byteAt(14) & 0xff).append('.').append(gid.byteAt(15) & 0xff);
                return sb.toString();
            }
            sb.append(Integer.toHexString(words[i]));
        }
        if (bestBase != -1 && bestBase + bestLen == 8) {
            sb.append(':');
        }
        return sb.toString();
    }
}
