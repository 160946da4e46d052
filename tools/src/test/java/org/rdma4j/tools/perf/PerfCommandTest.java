// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.rdma4j.tools.Rdma4j;
import picocli.CommandLine;

/** perftest's defaults and its refusals of invalid combinations: usage errors, exit 1. */
class PerfCommandTest {
    record Result(int code, String out, String err) {
    }

    static Result exec(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Rdma4j.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Result(code, out.toString(), err.toString());
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', value = {
        "write_bw|-c UD|UD connection only possible in SEND verb",
        "read_lat|-c UC|UC connection not possible in READ/ATOMIC verbs",
        "write_lat|-e|Events feature not available on WRITE verb",
        "write_lat|-b|Bidirectional is only available in BW test",
        "send_lat|-q 2|Multiple QPs only available on bw tests",
        "write_bw|-H|Available only on Latency tests",
        "write_bw|-o 4|Setting Outstanding reads only available on READ verb",
        "read_bw|-I 64|Inline feature not available on READ/Atomic verbs",
        "write_bw|-A CMP_AND_SWAP|You are not running the atomic_lat/bw test!",
        "atomic_bw|-A SWAP|Invalid Atomic type! please choose from {CMP_AND_SWAP,FETCH_AND_ADD}",
        "atomic_lat|-s 16|Message size cannot be changed for Atomic tests",
        "write_bw|--use-srq|Using SRQ only available in SEND tests.",
        "write_bw|-r 4|On RDMA verbs rx depth can be only 1",
        "write_bw|-n 4|Iteration num should be between 5 and 100000000",
        "write_bw|-t 0|Tx depth should be between 1 and 15000",
        "write_bw|-Q 2000|CQ moderation should be between 1 and 1024",
        "write_bw|-x 65|Gid index should be between 0 and 64",
        "write_bw|-D 5 -a|Duration mode currently doesn't support running on all sizes.",
        "send_bw|-D 4 -f 2|please check that DURATION > 2*MARGIN",
        "write_bw|-c XX|Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}",
        "write_bw|-R -c UC|UC is not supported in librdmacm",
        "send_bw|-R -c UD|-R with UD (SIDR) is not supported",
        "write_bw|--loopback 10.0.0.1|--loopback runs both sides here",
        "write_bw|-m 333|Invalid MTU - 333",
        "write_bw|-s 0|Message Size should be between 1 and 2147483647",
        "write_lat|-l 4|Post list is supported in BW tests only",
        "write_bw|-l 3|Number of iterations must be a multiple of post list size",
        "write_bw|-l 8 -Q 3|Post list size must be a multiple of CQ moderation",
        "write_bw|-l 200 -n 1000|Post list size 200 is larger than the TX depth 128",
        "write_bw|-l 0|Post list size should be at least 1",
    })
    void refusedAsPerftestDoes(String test, String args, String message) {
        String[] a = ("perf " + test + " " + args).split(" ");
        Result r = exec(a);
        assertEquals(1, r.code(), r.toString());
        assertTrue(r.err().contains(message), r.err());
        assertFalse(r.err().contains("Exception"), r.err());
    }

    @Test
    void perftestsDefaults() {
        PerfParams wl = PerfArgs.params("write_lat");
        assertEquals(2, wl.size);
        assertEquals(1000, wl.iters);
        assertEquals(1, wl.txDepth);
        assertEquals(18515, wl.port);
        PerfParams wb = PerfArgs.params("write_bw");
        assertEquals(65536, wb.size);
        assertEquals(5000, wb.iters);
        assertEquals(128, wb.txDepth);
        assertEquals(1, wb.cqMod, "cq moderation is off above 8 KiB");
        PerfParams small = PerfArgs.params("write_bw", "-s", "8");
        assertEquals(100, small.cqMod);
        PerfParams list = PerfArgs.params("write_bw", "-s", "8", "-l", "8"); // 5000 iterations: a multiple of 8
        assertEquals(8, list.postList);
        assertEquals(8, list.cqMod, "a post list sets the CQ moderation to its size unless -Q is given");
        assertEquals(4, PerfArgs.params("write_bw", "-s", "8", "-l", "16", "-D", "4", "-Q", "4").cqMod);
        PerfParams sb = PerfArgs.params("send_bw");
        assertEquals(1000, sb.iters);
        assertEquals(512, sb.rxDepth);
        PerfParams sud = PerfArgs.params("send_bw", "-c", "UD", "-n", "300");
        assertEquals(300, sud.rxDepth, "UD/UC: rx depth follows the iterations");
        PerfParams al = PerfArgs.params("atomic_lat");
        assertEquals(8, al.size);
        assertEquals(PerfParams.AtomicType.FETCH_AND_ADD, al.atomicType);
        PerfParams big = PerfArgs.params("write_bw", "-n", "30000");
        assertTrue(big.noPeak, "no peak past 20000 iterations");
        PerfParams k = PerfArgs.params("write_bw", "-s", "64K");
        assertEquals(65536, k.size);
        PerfParams d = PerfArgs.params("write_bw", "-D", "8");
        assertEquals(2, d.margin);
        assertEquals(0, d.iters);
    }

    @Test
    void rolesFollowHostAndServerOptions() {
        assertTrue(PerfArgs.command("write_bw").isLoopback());
        assertTrue(PerfArgs.command("write_bw", "--loopback").isLoopback());
        assertFalse(PerfArgs.command("write_bw", "--server").isLoopback());
        assertFalse(PerfArgs.command("write_bw", "-p", "18516").isLoopback());
        assertFalse(PerfArgs.command("write_bw", "--bind", "127.0.0.1").isLoopback());
        assertFalse(PerfArgs.command("write_bw", "-d", "soft0").isLoopback());
        PerfParams bound = PerfArgs.params("write_bw", "--bind", "::1");
        assertEquals(1, bound.gidIndex, "a --bind device's address is GID 1");
        assertEquals(3, PerfArgs.params("write_bw", "--bind", "::1", "-x", "3").gidIndex);
        PerfParams client = PerfArgs.params("write_bw", "10.0.0.1");
        assertFalse(client.server);
        assertEquals("10.0.0.1", client.host);
    }

    @Test
    void helpListsTheTests() {
        Result r = exec("help", "perf");
        assertEquals(0, r.code());
        for (PerfTest t : PerfTest.values()) {
            assertTrue(r.out().contains(t.command()), r.out());
        }
    }
}
