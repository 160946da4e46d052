// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Verbs;

class Rdma4jTest {
    @Test
    void unknownCommandIsAUsageError() {
        ToolRun run = ToolRun.of("frobnicate");
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("Unmatched argument at index 0: 'frobnicate'"), run::toString);
        assertTrue(run.err().contains("try 'rdma4j --help'"), run::toString);
        assertFalse(run.err().contains("\tat "), run::toString);
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
        "perf write_lat -s abc|rdma4j perf write_lat|Size argument abc should be a number",
        "perf write_bw --bogus|rdma4j perf write_bw|Unknown option: '--bogus'",
        "devinfo --bogus|rdma4j devinfo|Unknown option: '--bogus'",
        "pingpong --bogus|rdma4j pingpong|Unknown option: '--bogus'",
        "rping --bogus|rdma4j rping|Unknown option: '--bogus'",
        "study pingpong --bogus|rdma4j study pingpong|Unknown option: '--bogus'",
        "perf|rdma4j perf|Missing test",
    })
    void aUsageErrorIsTheMessageAndWhereTheHelpIsNotTheWholeUsage(String line, String command, String message) {
        ToolRun run = ToolRun.of(line.split(" "));
        assertTrue(run.exitCode() != 0, run::toString);
        assertTrue(run.err().contains(message), run::toString);
        assertTrue(run.err().strip().endsWith("try '" + command + " --help'"), run::toString);
        assertFalse(run.err().contains("Usage:"), run::toString);
        assertTrue(run.err().lines().count() <= 4, run::toString);
    }

    @Test
    void noCommandIsAUsageError() {
        ToolRun run = ToolRun.of();
        assertEquals(2, run.exitCode(), run::toString);
        assertTrue(run.err().contains("Missing command"), run::toString);
    }

    @Test
    void versionPrintsTheBuildsVersionAndCommit() {
        ToolRun run = ToolRun.of("--version");
        assertEquals(0, run.exitCode(), run::toString);
        String first = run.out().lines().findFirst().orElse("");
        assertEquals("rdma4j " + Verbs.version().version() + " (commit " + Verbs.version().commit() + ")", first);
        // the Maven build that runs this test fills both in
        assertTrue(first.matches("rdma4j \\d+\\.\\d+\\.\\d+\\S* \\(commit ([0-9a-f]{12}(-dirty)?|unknown)\\)"), first);
        assertFalse(Verbs.version().version().equals("unknown"), first);
    }

    @Test
    void helpListsTheCommands() {
        ToolRun run = ToolRun.of("--help");
        assertEquals(0, run.exitCode(), run::toString);
        for (String c : new String[] {"devices", "devinfo", "demo", "stress"}) {
            assertTrue(run.out().contains("  " + c + " "), run::toString);
        }
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({
        "perf write_lat, Usage: rdma4j perf write_lat",
        "study pingpong, Usage: rdma4j study pingpong",
        "pingpong ud, Usage: rdma4j pingpong ud",
        "perf, Usage: rdma4j perf ",
    })
    void helpShowsTheHelpOfTheCommandItsWordsName(String words, String usage) {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("help"));
        args.addAll(java.util.List.of(words.split(" ")));
        ToolRun run = ToolRun.of(args.toArray(String[]::new));
        assertEquals(0, run.exitCode(), run::toString);
        assertTrue(run.out().startsWith(usage), run::toString);
    }

    @Test
    void helpForACommandThatIsNotThereSaysWhichThereAre() {
        ToolRun run = ToolRun.of("help", "perf", "write_latency");
        assertTrue(run.exitCode() != 0, run::toString);
        assertTrue(run.err().contains("Unknown command: 'rdma4j perf write_latency'"), run::toString);
        assertTrue(run.err().contains("write_lat, write_bw"), run::toString);
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"", "perf", "study", "pingpong", "mcast"})
    void commandListsGiveWholeSentences(String command) {
        String[] args = command.isEmpty() ? new String[] {"--help"} : new String[] {command, "--help"};
        ToolRun run = ToolRun.of(args);
        assertEquals(0, run.exitCode(), run::toString);
        String list = run.out().substring(run.out().indexOf("Commands:\n") + "Commands:\n".length());
        // entries start at column 2; their wrapped lines are indented further
        java.util.List<String> entries = new java.util.ArrayList<>();
        for (String line : list.lines().toList()) {
            if (line.startsWith("  ") && !line.startsWith("   ")) {
                entries.add(line.strip());
            } else if (!entries.isEmpty()) {
                entries.set(entries.size() - 1, entries.getLast() + " " + line.strip());
            }
        }
        assertTrue(entries.size() >= 2, run::toString);
        for (String e : entries) {
            assertTrue(e.endsWith(".") || e.endsWith(")"), "a summary cut mid-sentence: " + e);
        }
    }

    @Test
    void stressAndStudySummariesAreWholeSentences() {
        ToolRun run = ToolRun.of("--help");
        String out = run.out().replaceAll("\\s+", " ");
        assertTrue(out.contains("corrupt packets, verifying every byte. pingpong"), run::toString);
        assertFalse(out.contains("The last line reads"), run::toString);
        assertTrue(out.contains("study Studies of what RDMA costs (ping-pong variants, memory registration, "
                + "latency distributions), measured on the devices rdma4j sees. help"), run::toString);
    }

    @Test
    void rpingHasHelp() {
        ToolRun run = ToolRun.of("rping", "--help");
        assertEquals(0, run.exitCode(), run::toString);
        assertTrue(run.out().startsWith("Usage: rdma4j rping"), run::toString);
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"stress", "perf write_bw", "pingpong rc", "mcast send"})
    void anAddressThatDoesNotResolveIsSaidInWords(String command) {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(command.split(" ")));
        args.addAll(java.util.List.of("--bind", "nosuch.invalid"));
        ToolRun run = ToolRun.of(args.toArray(String[]::new));
        assertTrue(run.exitCode() != 0, run::toString);
        assertTrue(run.err().contains("'nosuch.invalid' is neither an IP address nor a host name this machine can "
                + "resolve"), run::toString);
        assertFalse(run.err().contains("java."), run::toString);
    }

    @Test
    void indentedHelpLinesFitTheWidthSoNoneWrapsToTheLeftMargin() {
        java.util.List<String> tooLong = new java.util.ArrayList<>();
        java.util.ArrayDeque<picocli.CommandLine> todo = new java.util.ArrayDeque<>(java.util.List.of(Rdma4j.commandLine()));
        while (!todo.isEmpty()) {
            picocli.CommandLine c = todo.pop();
            todo.addAll(c.getSubcommands().values());
            int width = c.getCommandSpec().usageMessage().width();
            for (String line : c.getCommandSpec().usageMessage().description()) {
                // list items and examples: picocli would wrap their rest to column 0
                if (line.startsWith(" ") && line.length() > width) {
                    tooLong.add(c.getCommandSpec().qualifiedName() + ": " + line);
                }
            }
        }
        assertEquals(java.util.List.of(), tooLong);
    }
}
