// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cmutils;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.rdma4j.tools.Rdma4j;
import picocli.CommandLine;

/** One {@code rdma4j} command run on a thread of the test JVM, its output captured. */
record CmRun(Future<Integer> exit, StringWriter out, StringWriter err) {
    private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "cmutils-test");
        t.setDaemon(true);
        return t;
    });

    static CmRun start(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Rdma4j.commandLine(args);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return new CmRun(POOL.submit(() -> cl.execute(args)), out, err);
    }

    int exitCode() throws Exception {
        return exit.get(60, TimeUnit.SECONDS);
    }

    String all() {
        return "stdout:\n" + out + "\nstderr:\n" + err;
    }

    void awaitListening() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!out.toString().contains("listening on") && System.nanoTime() < deadline) {
            assertFalse(exit.isDone(), this::all);
            Thread.sleep(10);
        }
        assertTrue(out.toString().contains("listening on"), this::all);
    }
}
