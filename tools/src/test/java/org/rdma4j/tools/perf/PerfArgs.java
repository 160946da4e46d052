// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.util.ArrayList;
import java.util.List;
import org.rdma4j.tools.Rdma4j;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/** For the tests: the settings {@code rdma4j perf TEST ARGS...} runs with. */
final class PerfArgs {
    private PerfArgs() {}

    static PerfCommand.TestCommand command(String test, String... args) {
        List<String> all = new ArrayList<>(List.of("perf", test));
        all.addAll(List.of(args));
        CommandLine cl = Rdma4j.commandLine();
        ParseResult pr = cl.parseArgs(all.toArray(String[]::new));
        return (PerfCommand.TestCommand) pr.subcommand().subcommand().commandSpec().userObject();
    }

    static PerfParams params(String test, String... args) {
        return command(test, args).params();
    }
}
