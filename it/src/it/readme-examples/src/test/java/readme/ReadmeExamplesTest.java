// SPDX-License-Identifier: Apache-2.0
package readme;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Runs the README's examples as a user who pasted them into a main method would, and checks what they print. */
class ReadmeExamplesTest {
    interface Main {
        void run() throws Exception;
    }

    /** What {@code main} printed on System.out (also passed through to the test's output). */
    private static String printed(Main main) throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        OutputStream both = new OutputStream() {
            @Override
            public void write(int b) {
                captured.write(b);
                original.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                captured.write(b, off, len);
                original.write(b, off, len);
            }
        };
        System.setOut(new PrintStream(both, true, StandardCharsets.UTF_8));
        try {
            main.run();
        } finally {
            System.out.flush();
            System.setOut(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theVerbsExampleWritesHelloAcrossTheRcPair() throws Exception {
        assertEquals("hello, RDMA\n", printed(() -> ReadmeVerbsExample.main(new String[0])));
    }

    @Test
    void theCmExampleServerReceivesTheClientsMessage() throws Exception {
        assertEquals("the server got 14 bytes: hello, server\n", printed(() -> ReadmeCmExample.main(new String[0])));
    }
}
