// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.rdma4j.tools.text.HostileBytes;

/**
 * The stress control channel against a hostile peer on loopback: the strings a peer puts in its frames
 * (a refusal, the first error of its end of the run, its verdict) arrive with their control characters
 * replaced, so the reports that print them print nothing raw.
 */
@Timeout(60)
class ControlHostilePeerTest {
    /** ESC [ 2 J, BEL, CR, NUL, a C1 control and DEL, as a peer's Java string. */
    private static final String ATTACK = "\u001b[2J\u0007\r\u0000\u009b\u007fx";

    @Test
    void aRefusalFromAHostileServerIsReportedWithoutControlCharacters() throws Exception {
        try (ServerSocket fake = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                try (Socket s = fake.accept()) {
                    new DataOutputStream(s.getOutputStream()).writeUTF("no: " + ATTACK);
                    s.getInputStream().readAllBytes();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            try (Control c = Control.connect("127.0.0.1", fake.getLocalPort(), 10_000)) {
                c.timeout(10_000);
                Control.Failure f = assertThrows(Control.Failure.class, () -> c.readReply(1));
                assertEquals("the server refused the run: no: ?[2J?????x", f.getMessage());
                HostileBytes.assertNoControlCharacters(f.getMessage());
            }
            server.get(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void theFirstErrorOfAHostileClientArrivesWithoutControlCharacters() throws Exception {
        try (ServerSocket listener = Control.listen(0)) {
            int port = listener.getLocalPort();
            CompletableFuture<Void> client = CompletableFuture.runAsync(() -> {
                try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                    DataOutputStream out = new DataOutputStream(s.getOutputStream());
                    out.writeByte('E');
                    for (int i = 0; i < 6; i++) {
                        out.writeLong(0);
                    }
                    out.writeUTF(ATTACK);
                    out.writeInt(0);
                    out.flush();
                    s.getInputStream().readAllBytes();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            AtomicReference<Control.End> end = new AtomicReference<>();
            try (Control c = Control.accept(listener, 10_000)) {
                c.readClientFrames(0, new Control.ClientFrames() {
                    @Override
                    public void progress(long verified) {
                    }

                    @Override
                    public void end(Control.End e) {
                        end.set(e);
                    }
                });
            }
            assertEquals("?[2J?????x", end.get().firstError());
            client.get(20, TimeUnit.SECONDS);
        }
    }
}
