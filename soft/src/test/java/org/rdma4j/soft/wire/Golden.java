// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/** Loads the golden rxe captures (test resources under /golden, copied from shared/reference/golden). */
final class Golden {
    static final String IPV6_SEND_FIRST = "rxe-ipv6-send-first.hex";
    static final String IPV6_ACK = "rxe-ipv6-ack.hex";
    static final String IPV4_SEND_FIRST = "rxe-ipv4-send-first.hex";
    static final String IPV4_ACK = "rxe-ipv4-ack.hex";
    static final String PEER_IPV4_RAW_ACK = "peer-ipv4-raw-ack.hex";
    static final List<String> ALL = List.of(IPV6_SEND_FIRST, IPV6_ACK, IPV4_SEND_FIRST, IPV4_ACK, PEER_IPV4_RAW_ACK);

    private Golden() {
    }

    /** The packet's bytes, from the IP header through the ICRC. */
    static byte[] bytes(String name) {
        return parse(text(name));
    }

    static MemorySegment segment(String name) {
        return MemorySegment.ofArray(bytes(name));
    }

    static String text(String name) {
        try (InputStream in = Golden.class.getResourceAsStream("/golden/" + name)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource /golden/" + name
                        + " (copy it from shared/reference/golden)");
            }
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] parse(String hex) {
        return HexFormat.of().parseHex(hex.replaceAll("\\s+", ""));
    }

    /** The shared reference directory, found by walking up from the working directory, if reachable. */
    static Optional<Path> sharedDir() {
        for (Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("shared/reference/golden");
            if (Files.isDirectory(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
