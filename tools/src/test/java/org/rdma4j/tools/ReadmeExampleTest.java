// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's "Using the API" snippet, taken from README.md as it is, compiles against the API and
 * runs on soft0: a connected RC pair whose RDMA WRITE moves the bytes it prints. It must stay short.
 */
class ReadmeExampleTest {
    @Test
    void readmeSnippetCompilesAndRuns(@TempDir Path dir) throws Exception {
        String snippet = javaBlock(readme());
        long code = snippet.lines().filter(l -> !l.isBlank() && !l.startsWith("import ")).count();
        assertTrue(code < 20, "the README example should stay well under 20 lines, has " + code);
        List<String> imports = new ArrayList<>();
        StringBuilder body = new StringBuilder();
        for (String line : snippet.lines().toList()) {
            if (line.startsWith("import ")) {
                imports.add(line);
            } else {
                body.append("        ").append(line).append('\n');
            }
        }
        String source = String.join("\n", imports) + "\n\npublic class ReadmeSnippet {\n"
                + "    public static void main(String[] args) throws Exception {\n" + body + "    }\n}\n";
        Path file = dir.resolve("ReadmeSnippet.java");
        Files.writeString(file, source);

        ToolProvider javac = ToolProvider.findFirst("javac").orElse(null);
        assertNotNull(javac, "tests need a JDK");
        StringWriter diagnostics = new StringWriter();
        int rc = javac.run(new PrintWriter(diagnostics), new PrintWriter(diagnostics),
                "-d", dir.toString(), "-classpath", System.getProperty("java.class.path"), "--release", "25",
                file.toString());
        assertEquals(0, rc, () -> "the README snippet does not compile:\n" + diagnostics + "\n" + source);

        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()},
                ReadmeExampleTest.class.getClassLoader())) {
            Method main = loader.loadClass("ReadmeSnippet").getMethod("main", String[].class);
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            main.invoke(null, (Object) new String[0]);
        } finally {
            System.setOut(stdout);
        }
        String printed = captured.toString(StandardCharsets.UTF_8);
        assertEquals("hello, RDMA" + System.lineSeparator(), printed, "the WRITE moved the bytes");
    }

    @Test
    void readmeHasTheQuickStartCommands() throws IOException {
        String readme = readme();
        int quickStart = readme.indexOf("## Quick start");
        assertTrue(quickStart >= 0);
        String block = readme.substring(readme.indexOf("```sh\n", quickStart) + 6);
        block = block.substring(0, block.indexOf("```"));
        assertEquals("./rdma4j demo\n./mvnw -B verify\n", block);
    }

    private static String javaBlock(String readme) {
        int start = readme.indexOf("```java\n");
        assertTrue(start >= 0, "README has a java block");
        start += "```java\n".length();
        return readme.substring(start, readme.indexOf("```", start));
    }

    private static String readme() throws IOException {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path readme = d.resolve("README.md");
            if (Files.exists(readme) && Files.exists(d.resolve("mvnw"))) {
                return Files.readString(readme);
            }
        }
        throw new IOException("README.md not found above " + Path.of("").toAbsolutePath());
    }
}
