// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import java.io.PrintWriter;
import java.util.List;
import org.rdma4j.tools.perf.PerfCommand;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The {@code rdma4j} command. A user error (a bad flag, a device that does not exist, a verbs call
 * refused with an errno) ends with a one-line message and a non-zero exit code, never a stack trace;
 * only a bug in rdma4j itself shows one.
 */
@Command(name = "rdma4j",
        mixinStandardHelpOptions = true,
        versionProvider = Rdma4j.Version.class,
        description = "RDMA verbs for Java: tools for the devices rdma4j sees (the embedded soft RoCEv2 "
                + "device soft0, the native provider's devices, and soft devices over UDP).")
// the commands are added by commandLine(String...): see COMMANDS
public final class Rdma4j implements Runnable {
    /** Exit code of a failed verbs call ({@link VerbsException}). */
    public static final int EXIT_VERBS_ERROR = 1;

    @Spec
    private CommandSpec spec;

    /** The commands, in the order usage lists them. */
    private static final List<Class<?>> COMMANDS = List.of(DevicesCommand.class, DevinfoCommand.class,
            DemoCommand.class, StressCommand.class, org.rdma4j.tools.pingpong.PingpongCommand.class,
            PerfCommand.class, org.rdma4j.tools.rping.RpingCommand.class,
            org.rdma4j.tools.cmutils.RdmaServerCommand.class, org.rdma4j.tools.cmutils.RdmaClientCommand.class,
            org.rdma4j.tools.cmutils.CmatoseCommand.class, org.rdma4j.tools.cmutils.UdaddyCommand.class,
            McastCommand.class,
            org.rdma4j.tools.mckey.MckeyCommand.class, org.rdma4j.tools.study.StudyCommand.class,
            HelpCommand.class);

    public static void main(String[] args) {
        System.exit(commandLine(args).execute(args));
    }

    /**
     * The configured command line with every command (output to {@link CommandLine#getOut()}/{@link
     * CommandLine#getErr()}, which tests replace).
     */
    public static CommandLine commandLine() {
        return commandLine(new String[0]);
    }

    /**
     * The command line for {@code args}: when they start with a command's name (and, for {@code perf},
     * a test's), only that command (and test) is built, as picocli builds every option of every command
     * it is given; otherwise (no command, {@code help}, a typo to suggest a fix for) all of them.
     */
    public static CommandLine commandLine(String... args) {
        String first = args.length > 0 && !"help".equals(args[0]) ? args[0] : null;
        String only = first != null && COMMANDS.stream().anyMatch(c -> nameOf(c).equals(first)) ? first : null;
        CommandLine cl = new CommandLine(new Rdma4j());
        for (Class<?> c : COMMANDS) {
            if (only == null || only.equals(nameOf(c))) {
                cl.addSubcommand(c == PerfCommand.class ? perf(only == null || args.length < 2 ? null : args[1])
                        : new CommandLine(c));
            }
        }
        cl.registerConverter(java.net.InetAddress.class, Rdma4j::address);
        CommandList.install(cl);
        cl.setExecutionExceptionHandler(new VerbsErrors());
        cl.setParameterExceptionHandler(Rdma4j::usageError);
        return cl;
    }

    /** An address option's value: an IP address or a host name this machine resolves, said in words if not. */
    static java.net.InetAddress address(String text) {
        try {
            return java.net.InetAddress.getByName(text);
        } catch (java.net.UnknownHostException e) {
            throw new CommandLine.TypeConversionException("'" + text + "' is neither an IP address nor a host name "
                    + "this machine can resolve");
        }
    }

    private static String nameOf(Class<?> command) {
        return command.getAnnotation(Command.class).name();
    }

    /** {@code perf} with the test named {@code test}, or with all of them when it names none. */
    private static CommandLine perf(String test) {
        String only = test != null && PerfCommand.TESTS.stream().anyMatch(t -> nameOf(t).equals(test)) ? test : null;
        CommandLine perf = new CommandLine(new PerfCommand());
        for (Class<?> t : PerfCommand.TESTS) {
            if (only == null || only.equals(nameOf(t))) {
                perf.addSubcommand(new CommandLine(t));
            }
        }
        return perf;
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing command: say which one (e.g. 'rdma4j demo').");
    }

    /**
     * A bad command line: the message, picocli's suggestions if it has any, then where the usage is
     * ({@code try 'rdma4j perf write_lat --help'}), not the usage itself (which buries the message).
     */
    private static int usageError(ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        PrintWriter err = cmd.getErr();
        err.println(ex.getMessage());
        UnmatchedArgumentException.printSuggestions(ex, err);
        err.println(tryHelp(cmd));
        err.flush();
        return cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    /** The line after a usage error: {@code try 'rdma4j <command...> --help'}. */
    public static String tryHelp(CommandLine cmd) {
        return "try '" + cmd.getCommandSpec().qualifiedName() + " --help'";
    }

    /** A verbs call that fails is the user's or the device's problem, not a crash: one line, exit 1. */
    private static final class VerbsErrors implements IExecutionExceptionHandler {
        @Override
        public int handleExecutionException(Exception ex, CommandLine cmd, ParseResult parseResult)
                throws Exception {
            for (Throwable t = ex; t != null; t = t.getCause()) {
                if (t instanceof VerbsException ve) {
                    PrintWriter err = cmd.getErr();
                    err.println("rdma4j: " + ve.getMessage());
                    err.flush();
                    return EXIT_VERBS_ERROR;
                }
            }
            throw ex;
        }
    }

    /**
     * {@code --version}: rdma4j's version and the commit it was built from ({@link Verbs#version()}, which
     * the build records), then the Java runtime.
     */
    public static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"rdma4j " + Verbs.version(),
                    "Java " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")"};
        }
    }
}
