// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;

/**
 * The tools' package graph: the launcher's package ({@code org.rdma4j.tools}: Rdma4j, CommandList, the
 * small commands) may use every command package; a command package ({@code pingpong}, {@code perf},
 * {@code rping}, {@code cmutils}, {@code mckey}, {@code stress}, {@code study}) uses only the shared ones
 * ({@code cli}, {@code device}, {@code text}, {@code plot}), never the launcher's package or another
 * command's; and no package cycle anywhere. Main classes only (test helpers run the launcher).
 */
@AnalyzeClasses(packages = PackageGraphTest.TOOLS, importOptions = ImportOption.DoNotIncludeTests.class)
class PackageGraphTest {
    static final String TOOLS = "org.rdma4j.tools";
    private static final String[] COMMANDS = {"pingpong", "perf", "rping", "cmutils", "mckey", "stress", "study"};
    private static final String[] SHARED = {"cli", "device", "text", "plot"};

    /**
     * One slice per package under {@code org.rdma4j.tools} (with its subpackages), and one for the
     * launcher's package itself, which {@code slices().matching("org.rdma4j.tools.(*)..")} leaves out (and
     * with it the cycles through the launcher's package).
     */
    private static final SliceAssignment TOOLS_PACKAGES = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass c) {
            String p = c.getPackageName();
            if (p.equals(TOOLS)) {
                return SliceIdentifier.of("(launcher) " + TOOLS);
            }
            if (p.startsWith(TOOLS + ".")) {
                return SliceIdentifier.of(TOOLS + "." + p.substring(TOOLS.length() + 1).split("\\.")[0]);
            }
            return SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "the packages of " + TOOLS;
        }
    };

    @ArchTest
    static final ArchRule theToolsPackagesHaveNoCycle = slices().assignedFrom(TOOLS_PACKAGES).should().beFreeOfCycles();

    @ArchTest
    static final ArchRule aCommandPackageUsesOnlyTheSharedPackages = commandLayers();

    private static ArchRule commandLayers() {
        LayeredArchitecture layers = layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("launcher").definedBy(TOOLS);
        String[] shared = new String[SHARED.length];
        for (int i = 0; i < SHARED.length; i++) {
            shared[i] = TOOLS + "." + SHARED[i] + "..";
        }
        layers = layers.layer("shared").definedBy(shared);
        for (String c : COMMANDS) {
            layers = layers.layer(c).definedBy(TOOLS + "." + c + "..");
        }
        layers = layers.whereLayer("launcher").mayNotBeAccessedByAnyLayer();
        for (String c : COMMANDS) {
            layers = layers.whereLayer(c).mayOnlyBeAccessedByLayers("launcher");
        }
        return layers.whereLayer("shared").mayNotAccessAnyLayer();
    }
}
