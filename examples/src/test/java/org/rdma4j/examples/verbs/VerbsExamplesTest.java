// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.examples.verbs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

class VerbsExamplesTest {
    private static String run(BiConsumer<Ends, PrintStream> program, String... args) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        program.accept(Ends.parse(args), new PrintStream(bytes, true, StandardCharsets.UTF_8));
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void udPingPongOnSoft0() {
        String out = run(UdPingPong::run);
        System.err.println(out);
        assertTrue(out.contains("10 UD round trips; the datagram with the wrong Q_Key was dropped"), out);
    }

    @Test
    void atomicCounterOnSoft0() {
        String out = run((e, o) -> { try { AtomicCounter.run(e, o); } catch (Exception x) { throw new RuntimeException(x); } });
        System.err.println(out);
        assertTrue(out.contains("counter = 2000"), out);
    }

    @Test
    void srqOnSoft0() {
        String out = run((e, o) -> { try { SharedReceiveQueue.run(e, o); } catch (Exception x) { throw new RuntimeException(x); } });
        System.err.println(out);
        assertTrue(out.contains("limit events"), out);
    }
}
