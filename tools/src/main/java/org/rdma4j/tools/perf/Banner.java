// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.util.Locale;
import org.rdma4j.verbs.Gid;

/**
 * The text perftest prints before the results: the test-information box ({@code ctx_print_test_info})
 * and the address lines ({@code ctx_print_pingpong_data}), in its layout. Stateless.
 */
final class Banner {
    private Banner() {}

    /**
     * The box: the test name, then the settings, between two {@link Tables#RESULT_LINE}s.
     *
     * @param device the device name
     * @param linkLayer "IB" or "Ethernet"
     */
    static String testInfo(PerfParams p, String device, String linkLayer) {
        StringBuilder sb = new StringBuilder();
        sb.append(Tables.RESULT_LINE);
        sb.append("                    ");
        sb.append(p.verb().title()).append(' ');
        if (p.verb() == Verb.ATOMIC) {
            sb.append(p.atomicType.name()).append(' ');
        }
        if (p.isBw()) {
            if (p.duplex) {
                sb.append("Bidirectional ");
            }
            if (p.postList > 1) {
                sb.append("Post List ");
            }
            sb.append("BW ");
        } else {
            sb.append("Latency ");
        }
        sb.append("Test\n");
        if (p.useEvent) {
            sb.append(String.format(Locale.ROOT, " Test with events. Using %s_comp%d\n", device, 0));
        }
        sb.append(String.format(Locale.ROOT, " Dual-port       : %s\t\tDevice         : %s\n", "OFF", device));
        sb.append(String.format(Locale.ROOT, " Number of qps   : %d\t\tTransport type : %s\n", p.numQps, "IB"));
        sb.append(String.format(Locale.ROOT, " Connection type : %s\t\tUsing SRQ      : %s\n", p.connection.name(),
                p.useSrq ? "ON" : "OFF"));
        sb.append(" PCIe relax order: Unsupported\n");
        sb.append(" ibv_wr* API     : OFF\n");
        if (p.isClient() || p.duplex) {
            sb.append(String.format(Locale.ROOT, " TX depth        : %d\n", p.txDepth));
        }
        if (p.postList > 1) {
            sb.append(String.format(Locale.ROOT, " Post List       : %d\n", p.postList));
        }
        if (p.verb() == Verb.SEND && (p.server || p.duplex)) {
            sb.append(String.format(Locale.ROOT, " RX depth        : %d\n", p.rxDepth));
        }
        if (p.isBw()) {
            sb.append(String.format(Locale.ROOT, " CQ Moderation   : %d\n", p.cqMod));
        }
        sb.append(String.format(Locale.ROOT, " Mtu             : %d[B]\n", PerfParams.mtuBytes(p.currMtu)));
        sb.append(String.format(Locale.ROOT, " Link type       : %s\n", linkLayer));
        if (p.gidIndex != -1) {
            sb.append(String.format(Locale.ROOT, " GID index       : %d\n", p.gidIndex));
        }
        if (p.verb() != Verb.READ && p.verb() != Verb.ATOMIC) {
            sb.append(String.format(Locale.ROOT, " Max inline data : %d[B]\n", p.inlineSize));
        } else {
            sb.append(String.format(Locale.ROOT, " Outstand reads  : %d\n", p.outReads));
        }
        if (p.rdmaCm) {
            sb.append(" rdma_cm QPs\t : ON\n");
            sb.append(" Data ex. method : rdma_cm");
            if (p.server) {
                sb.append('\n').append(Tables.RESULT_LINE);
                sb.append(" Waiting for client rdma_cm QP to connect\n");
                sb.append(" Please run the same command with the IB/RoCE interface IP");
            }
            sb.append('\n');
        } else {
            sb.append(" rdma_cm QPs\t : OFF\n");
            sb.append(" Data ex. method : Ethernet\n");
        }
        sb.append(Tables.RESULT_LINE);
        return sb.toString();
    }

    /**
     * One address line, "local" or "remote", then the GID line when GIDs are in use. As perftest, RKey
     * and VAddr are printed for WRITE and READ only, OUT for READ only.
     */
    static String address(String side, PerfDest d, Verb verb, boolean withGid) {
        StringBuilder sb = new StringBuilder();
        sb.append(' ').append(side).append(" address: LID ").append(hashHex(d.lid(), 4)).append(" QPN ")
                .append(hashHex(d.qpn(), 6)).append(" PSN ").append(hashHex(d.psn(), 6));
        if (verb == Verb.READ) {
            sb.append(" OUT ").append(hashHex(d.outReads(), 4));
        }
        if (verb == Verb.READ || verb == Verb.WRITE) {
            sb.append(" RKey ").append(hashHex(d.rkey() & 0xffffffffL, 8)).append(" VAddr ")
                    .append(hashHex(d.vaddr(), 16));
        }
        sb.append('\n');
        if (withGid) {
            sb.append(" GID: ");
            for (int i = 0; i < Gid.LENGTH; i++) {
                sb.append(String.format(Locale.ROOT, i == 0 ? "%02d" : ":%02d", d.gid().byteAt(i) & 0xff));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /** C's {@code %#0Wx}: "0x" and zero-padded hex in W characters, but a plain zero-padded 0. */
    static String hashHex(long v, int width) {
        if (v == 0) {
            return "0".repeat(width);
        }
        String hex = Long.toHexString(v);
        int digits = Math.max(hex.length(), width - 2);
        return "0x" + "0".repeat(digits - hex.length()) + hex;
    }
}
