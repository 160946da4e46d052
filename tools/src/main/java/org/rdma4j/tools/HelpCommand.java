// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Help;
import picocli.CommandLine.IHelpCommandInitializable2;
import picocli.CommandLine.Parameters;

/**
 * {@code rdma4j help [COMMAND [SUBCOMMAND...]]}: the help of the command the words name, however deep
 * ({@code rdma4j help perf write_lat}, {@code rdma4j help study pingpong}); picocli's own help command
 * looks at the first word only and shows the parent's help for the rest.
 */
@Command(name = "help", helpCommand = true,
        description = "Show the help of a command (and of its subcommands: 'rdma4j help perf write_lat').")
public final class HelpCommand implements IHelpCommandInitializable2, Runnable {
    @Parameters(paramLabel = "COMMAND", arity = "0..*", description = "the command and its subcommands")
    private List<String> words = new ArrayList<>();

    private CommandLine self;
    private Help.ColorScheme colors;
    private PrintWriter out;

    @Override
    public void init(CommandLine helpCommandLine, Help.ColorScheme colorScheme, PrintWriter out, PrintWriter err) {
        this.self = helpCommandLine;
        this.colors = colorScheme;
        this.out = out;
    }

    @Override
    public void run() {
        CommandLine target = self.getParent();
        for (String w : words) {
            CommandLine next = target.getSubcommands().get(w);
            if (next == null) {
                throw new CommandLine.ParameterException(self, "Unknown command: '"
                        + target.getCommandSpec().qualifiedName() + " " + w + "'"
                        + (target.getSubcommands().isEmpty() ? " (it has no subcommands)"
                        : " (its commands: " + String.join(", ", target.getSubcommands().keySet()) + ")"));
            }
            target = next;
        }
        target.usage(out, colors);
        out.flush();
    }
}
