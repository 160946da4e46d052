// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.nio.file.Path;
import org.rdma4j.tools.cli.CNumber;
import org.rdma4j.tools.perf.PerfCommand.TestCommand;
import picocli.CommandLine;

/**
 * perftest's {@code parser} and {@code force_dependecies} for the options of one {@code rdma4j perf} test:
 * the run's {@link PerfParams}, or the usage error perftest gives (in its words). Which options a test
 * refuses, the defaults of {@code init_perftest_params}, the adjustments perftest makes among them, and
 * the role (client, server or in-process loopback). Stateless.
 */
final class PerftestParser {
    private PerftestParser() {
    }

    /** perftest's parser and force_dependecies for the options of {@code c}: the settings, or a usage error. */
    static PerfParams params(TestCommand c) {
        PerfTest t = c.test();
        Verb verb = t.verb();
        boolean bw = t.isBw();
        PerfParams p = new PerfParams();
        p.test = t;
        if (c.port != null && (c.port < 0 || c.port > 65535)) {
            throw c.usage(" Port should be between 0 and 65535");
        }
        if (c.ibPort < 1) {
            throw c.usage("IB Port can't be less than 1");
        }
        range(c, "Iteration num", c.iters, PerfParams.MIN_ITER, PerfParams.MAX_ITER);
        range(c, "Tx depth", c.txDepth, 1, 15000);
        range(c, "Gid index", c.gidIndex, 0, 64);
        range(c, "Max inline", c.inline, 0, PerfParams.MAX_INLINE);
        range(c, "CQ moderation", c.cqMod, 1, 1024);
        range(c, "num of Qps", c.qps, 1, 16384);
        range(c, " Rx depth", c.rxDepth, 1, 16384);
        if (c.sl < 0 || c.sl > 15) {
            throw c.usage(" Only 15 Service levels");
        }
        if (c.qpTimeout < 0 || c.qpTimeout > 31) {
            throw c.usage(" QP Timeout should be between 0 and 31");
        }
        if (c.qps != null && !bw) {
            throw c.usage(" Multiple QPs only available on bw tests");
        }
        if (c.inline != null && (verb == Verb.READ || verb == Verb.ATOMIC)) {
            throw c.usage(" Inline feature not available on READ/Atomic verbs");
        }
        if (c.outs != null && verb != Verb.READ && verb != Verb.ATOMIC) {
            throw c.usage(" Setting Outstanding reads only available on READ verb");
        }
        if (c.rxDepth != null && verb != Verb.SEND && c.rxDepth > PerfParams.DEF_RX_RDMA) {
            throw c.usage(" On RDMA verbs rx depth can be only 1");
        }
        if (c.atomicType != null) {
            if (verb != Verb.ATOMIC) {
                throw c.usage(" You are not running the atomic_lat/bw test! To change the atomic action type, "
                        + "you must run one of the atomic tests");
            }
            p.atomicType = switch (c.atomicType) {
                case "CMP_AND_SWAP" -> PerfParams.AtomicType.CMP_AND_SWAP;
                case "FETCH_AND_ADD" -> PerfParams.AtomicType.FETCH_AND_ADD;
                default -> throw c.usage(" Invalid Atomic type! please choose from {CMP_AND_SWAP,FETCH_AND_ADD}");
            };
        }
        if (c.events && verb == Verb.WRITE) {
            throw c.usage(" Events feature not available on WRITE verb");
        }
        if (c.bidirectional && !bw) {
            throw c.usage(" Bidirectional is only available in BW test");
        }
        if (c.noPeak && !bw) {
            throw c.usage(" NoPeak only valid for BW tests");
        }
        if ((c.histogram || c.unsorted) && bw) {
            throw c.usage(" Available only on Latency tests");
        }
        if (c.duration != null && c.duration <= 0) {
            throw c.usage(" Duration period must be positive");
        }
        if (c.margin != null && c.margin < 0) {
            throw c.usage(" Margin must be non-negative");
        }
        if (c.connection != null) {
            p.connection = switch (c.connection) {
                case "RC" -> Connection.RC;
                case "UC" -> {
                    if (verb == Verb.READ || verb == Verb.ATOMIC) {
                        throw c.usage(" UC connection not possible in READ/ATOMIC verbs");
                    }
                    yield Connection.UC;
                }
                case "UD" -> {
                    if (verb != Verb.SEND) {
                        throw c.usage(" UD connection only possible in SEND verb");
                    }
                    yield Connection.UD;
                }
                case "XRC", "DC", "SRD", "RawEth" -> throw c.usage(" -c " + c.connection
                        + ": rdma4j runs RC, UC and UD (" + c.connection + " needs a vendor extension)");
                default -> throw c.usage(" Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}");
            };
        }
        if (c.rdmaCm) {
            if (p.connection == Connection.UC) {
                throw c.usage(" UC is not supported in librdmacm");
            }
            if (p.connection == Connection.UD) {
                throw c.usage(" -R with UD (SIDR) is not supported by rdma4j perf yet: -R runs RC");
            }
            p.rdmaCm = true;
            p.cmAddress = c.devices.bindAddress();
        }
        if (c.mtu != null && !(c.mtu == 256 || c.mtu == 512 || c.mtu == 1024 || c.mtu == 2048 || c.mtu == 4096)) {
            throw c.usage(" Invalid MTU - " + c.mtu + " : please choose mtu from {256,512,1024,2048,4096}");
        }
        // defaults (init_perftest_params)
        p.size = bw ? PerfParams.DEF_SIZE_BW : PerfParams.DEF_SIZE_LAT;
        p.txDepth = bw ? PerfParams.DEF_TX_BW : PerfParams.DEF_TX_LAT;
        p.rxDepth = verb == Verb.SEND ? PerfParams.DEF_RX_SEND : PerfParams.DEF_RX_RDMA;
        p.iters = bw && verb == Verb.WRITE ? PerfParams.DEF_ITERS_WB : PerfParams.DEF_ITERS;
        if (verb == Verb.ATOMIC) {
            p.size = PerfParams.DEF_SIZE_ATOMIC;
        }
        if (c.size != null) {
            p.size = parseSize(c, c.size);
            p.sizeGiven = true;
            if (p.size < 1 || p.size > Integer.MAX_VALUE) {
                throw c.usage(" Message Size should be between 1 and " + Integer.MAX_VALUE);
            }
        }
        if (c.iters != null) {
            p.iters = c.iters;
        }
        if (c.txDepth != null) {
            p.txDepth = c.txDepth;
        }
        if (c.rxDepth != null) {
            p.rxDepth = c.rxDepth;
        }
        if (c.qps != null) {
            p.numQps = c.qps;
        }
        if (c.cqMod != null) {
            p.cqMod = c.cqMod;
            p.cqModGiven = true;
        }
        if (c.inline != null) {
            p.inlineSize = c.inline;
        }
        if (c.outs != null) {
            p.outReads = c.outs;
        }
        if (c.gidIndex != null) {
            p.gidIndex = c.gidIndex;
            p.gidGiven = true;
        } else if (c.devices.bindAddress() != null) {
            // a --bind device's GID index 1 is its address; perftest's pick (index 0 unless an
            // IPv4-mapped GID follows) would be the link-local GID for an IPv6 address
            p.gidIndex = 1;
            p.gidGiven = true;
        }
        p.mtu = c.mtu != null ? c.mtu : 0;
        p.ibPort = c.ibPort;
        p.ibDev = c.ibDev;
        p.sl = c.sl;
        p.qpTimeout = c.qpTimeout;
        p.useEvent = c.events;
        p.useSrq = c.useSrq;
        p.noPeak = c.noPeak;
        p.duplex = c.bidirectional;
        p.gbits = c.gbits;
        p.histogram = c.histogram;
        p.unsorted = c.unsorted;
        p.ipv6 = c.ipv6;
        p.all = c.all;
        p.exchangeTimeoutS = c.exchangeTimeout;
        p.printCounters = c.counters;
        if (c.exchangeTimeout < 1 || c.exchangeTimeout > Integer.MAX_VALUE / 1000) {
            throw c.usage("--exchange-timeout " + c.exchangeTimeout + " must be a positive number of seconds");
        }
        p.json = c.json != null ? c.json : c.outJson || c.outJsonFile != null
                ? (c.outJsonFile != null ? c.outJsonFile : Path.of("perftest_out.json")) : null;
        p.plot = c.plot;
        if (c.duration != null) {
            p.duration = c.duration;
        }
        p.margin = c.margin != null ? c.margin : -1;
        c.more.apply(p, c::usage);
        // force_dependecies
        if (!p.isDuration()) {
            if (p.txDepth > p.iters) {
                p.txDepth = p.iters;
            }
            if (verb == Verb.SEND && p.rxDepth > p.iters) {
                p.rxDepth = p.iters;
            }
            if ((p.connection == Connection.UD || p.connection == Connection.UC)
                    && p.rxDepth == PerfParams.DEF_RX_SEND) {
                p.rxDepth = Math.min(p.iters, PerfParams.UC_MAX_RX);
            }
        }
        if (p.size > PerfParams.MSG_SIZE_CQ_MOD_LIMIT && p.connection != Connection.UD && !p.all && !p.useEvent
                && !p.cqModGiven) {
            p.cqMod = 1;
        }
        if (p.cqMod > p.txDepth) {
            p.cqMod = p.txDepth;
        }
        if (c.postList != null && c.postList > 1) {
            if (!bw) {
                throw c.usage("Post list is supported in BW tests only");
            }
            if (!p.isDuration() && p.iters % c.postList != 0) {
                throw c.usage("Number of iterations must be a multiple of post list size");
            }
            if (!p.cqModGiven) {
                p.cqMod = c.postList; // perftest: "CQ moderation will be the size of the post list"
            } else if (c.postList % p.cqMod != 0) {
                throw c.usage("Post list size must be a multiple of CQ moderation");
            }
            if (c.postList > p.txDepth) {
                // perftest would never post (a list must fit in tx_depth) and wait forever
                throw c.usage("Post list size " + c.postList + " is larger than the TX depth " + p.txDepth);
            }
            p.postList = c.postList;
        } else if (c.postList != null && c.postList < 1) {
            throw c.usage(" Post list size should be at least 1");
        }
        if (verb == Verb.READ || verb == Verb.ATOMIC) {
            p.inlineSize = 0;
        }
        if (p.all) {
            if (verb == Verb.ATOMIC) {
                throw c.usage(" Message size cannot be changed for Atomic tests");
            }
            p.size = PerfParams.MAX_SIZE;
        }
        if (verb == Verb.ATOMIC && p.size != PerfParams.DEF_SIZE_ATOMIC) {
            throw c.usage(" Message size cannot be changed for Atomic tests");
        }
        if (p.useSrq && verb != Verb.SEND) {
            throw c.usage(" Using SRQ only available in SEND tests.");
        }
        if (p.useSrq && p.numQps > p.rxDepth) {
            throw c.usage(" Using SRQ depth should be greater than number of QPs.");
        }
        if (p.isDuration()) {
            p.iters = 0;
            p.noPeak = true;
            if (p.useEvent) {
                throw c.usage("Duration mode doesn't work with events.");
            }
            if (p.all) {
                throw c.usage("Duration mode currently doesn't support running on all sizes.");
            }
            if (p.margin == -1) {
                p.margin = p.duration / 4;
            }
            if (!(p.duration > 2 * p.margin)) {
                throw c.usage("please check that DURATION > 2*MARGIN");
            }
        }
        if (p.duplex && verb == Verb.SEND && (p.connection != Connection.RC || p.useEvent)) {
            throw c.usage(" -b: send_bw -b runs over RC with polling (UC and UD need receive credits, which "
                    + "rdma4j does not send; -e is not supported with it)");
        }
        if (p.connection == Connection.UD && p.inlineSize > PerfParams.MAX_INLINE_UD) {
            p.inlineSize = PerfParams.MAX_INLINE_UD;
        }
        if (verb == Verb.SEND && p.rxDepth % 2 == 1 && !p.all) {
            p.rxDepth += 1;
        }
        if (!p.isDuration() && p.iters > PerfParams.PEAK_ITERS_LIMIT && bw) {
            p.noPeak = true;
        }
        // roles
        if (c.loopback && c.host != null) {
            throw c.usage("--loopback runs both sides here: it takes no host (" + c.host + ")");
        }
        if (c.loopback && (c.server || c.ibDev != null || c.devices.bindAddress() != null)) {
            throw c.usage("--loopback uses two embedded soft devices: it cannot be combined with --server, -d or "
                    + "--bind");
        }
        if (c.server && c.host != null) {
            throw c.usage("--server waits for a client: it takes no host (" + c.host + ")");
        }
        p.host = c.host;
        p.server = c.host == null;
        if (c.port != null) {
            p.port = c.port;
        }
        if (verb == Verb.SEND && bw && p.server && !p.duplex && !c.isLoopback()) {
            // perftest's send_bw server has no peak (loopback's server gets it in Loopback.copyAsServer)
            p.noPeak = true;
        }
        return p;
    }

    private static void range(TestCommand c, String name, Integer v, int min, int max) {
        if (v != null && (v < min || v > max)) {
            throw c.usage(" " + name + " should be between " + min + " and " + max);
        }
    }

    private static long parseSize(TestCommand c, String text) {
        String t = text.strip();
        long factor = 1;
        if (t.endsWith("K")) {
            factor = 1024;
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("M")) {
            factor = 1024 * 1024;
            t = t.substring(0, t.length() - 1);
        }
        try {
            return (long) new CNumber().convert(t) * factor;
        } catch (CommandLine.TypeConversionException e) {
            throw c.usage(" Size argument " + text + " should be a number (K and M suffixes allowed)");
        }
    }
}
