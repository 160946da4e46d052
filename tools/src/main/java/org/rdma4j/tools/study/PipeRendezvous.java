// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.rdma4j.tools.text.PeerText;

/**
 * {@link Rendezvous} between two JVMs over a pipe pair (the child's standard input and output): each
 * line it writes is {@code @@ TEXT}; a side that fails writes {@code @@error MESSAGE}, which ends the
 * other side's wait with that message (made printable). Lines without the prefix (a JVM warning) are
 * skipped. A daemon thread reads, so every wait is bounded. Thread safe for one user per direction.
 */
final class PipeRendezvous implements Rendezvous, AutoCloseable {
    static final String PREFIX = "@@ ";
    static final String ERROR = "@@error ";
    private static final String EOF = "\u0000eof";

    private final PrintStream out;
    private final String peerName;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Thread reader;

    PipeRendezvous(BufferedReader in, PrintStream out, String peerName) {
        this.out = out;
        this.peerName = peerName;
        reader = Thread.ofPlatform().daemon().name("study-latency-pipe").start(() -> {
            try {
                for (String line; (line = in.readLine()) != null; ) {
                    if (line.startsWith(PREFIX) || line.startsWith(ERROR)) {
                        lines.add(line);
                    }
                }
            } catch (IOException e) {
                // the pipe broke: as its end
            }
            lines.add(EOF);
        });
    }

    @Override
    public String swap(String mine, String step) {
        send(PREFIX + mine);
        String line;
        try {
            line = lines.poll(TIMEOUT_NS, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StudyFailure(step + ": interrupted");
        }
        if (line == null) {
            throw new StudyFailure(step + ": " + peerName + " said nothing within " + TIMEOUT_NS / 1_000_000_000L + " s");
        }
        if (line.equals(EOF)) {
            lines.add(EOF); // for the next swap too
            throw new StudyFailure(step + ": " + peerName + " ended");
        }
        if (line.startsWith(ERROR)) {
            throw new StudyFailure(step + ": " + peerName + " failed: " + PeerText.printable(line.substring(ERROR.length()), 200));
        }
        return line.substring(PREFIX.length());
    }

    /** Tells the other side this one failed (it ends its wait with {@code message}). */
    void fail(String message) {
        send(ERROR + message.replace('\n', ' ').replace('\r', ' '));
    }

    private void send(String line) {
        out.println(line);
        out.flush();
    }

    @Override
    public void close() {
        reader.interrupt();
    }
}
