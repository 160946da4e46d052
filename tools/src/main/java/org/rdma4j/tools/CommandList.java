// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.Help.Column;
import picocli.CommandLine.Help.TextTable;
import picocli.CommandLine.IHelpSectionRenderer;

/**
 * The "Commands:" section of a help text: each command with the first sentence of its description,
 * whole (picocli's list takes the first description line, which for a long description ends in the
 * middle of a sentence). Stateless.
 */
final class CommandList implements IHelpSectionRenderer {
    private static final Pattern SENTENCE_END = Pattern.compile("[.!?](?=\\s|$)");

    /** Renders the list for every command of {@code root} that has subcommands, {@code root} included. */
    static void install(CommandLine root) {
        root.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_COMMAND_LIST, new CommandList());
        for (CommandLine sub : root.getSubcommands().values()) {
            if (!sub.getSubcommands().isEmpty()) {
                install(sub);
            }
        }
    }

    /** The first sentence of a description (its first line, up to the first '.', '!' or '?' followed by a space). */
    static String summary(String[] description) {
        if (description.length == 0) {
            return "";
        }
        String first = description[0].strip();
        Matcher m = SENTENCE_END.matcher(first);
        String sentence = m.find() ? first.substring(0, m.end()) : first;
        // a first line that introduces a list ("...: ") ends here as a sentence
        return sentence.endsWith(":") ? sentence.substring(0, sentence.length() - 1) + "." : sentence;
    }

    @Override
    public String render(Help help) {
        Map<String, Help> subs = help.subcommands();
        if (subs.isEmpty()) {
            return "";
        }
        int names = 0;
        for (String n : subs.keySet()) {
            names = Math.max(names, n.length());
        }
        int width = help.commandSpec().usageMessage().width();
        TextTable table = TextTable.forColumns(help.colorScheme(),
                new Column(names + 4, 2, Column.Overflow.SPAN),
                new Column(width - names - 4, 2, Column.Overflow.WRAP));
        for (Map.Entry<String, Help> e : subs.entrySet()) {
            table.addRowValues(e.getKey(), summary(e.getValue().commandSpec().usageMessage().description()));
        }
        return table.toString();
    }
}
