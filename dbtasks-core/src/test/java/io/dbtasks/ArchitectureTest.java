package io.dbtasks;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

/** The layering of the core, enforced: the API does not lean on the engine, and no Spring anywhere. */
class ArchitectureTest {
    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.dbtasks");

    /**
     * One slice per core package, the root included, with two exceptions. The root package holds two
     * layers: the entry point {@code DbTasks} (with its {@code Builder}), which wires every capability
     * and the engine, on top; and the vocabulary every other package uses ({@code TaskRequest}, {@code
     * TaskContext}, {@code DbTasksException}, ...) at the bottom. They are two slices, so a vocabulary
     * type that reaches up into a capability, or a capability that reaches up into the entry point, is
     * a cycle. The engine's packages are slices of their own too: the wiring ({@code
     * io.dbtasks.internal}), its roles ({@code claim}, {@code execution}, {@code lease}, {@code
     * completion}, {@code enqueue}, {@code query}, {@code maintenance}), their plumbing ({@code
     * support}), and the JDBC implementations of the tools ({@code lock}, {@code once}, ...).
     */
    private static final SliceAssignment CORE_PACKAGES = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
            String pkg = javaClass.getPackageName();
            if (pkg.equals("io.dbtasks")) {
                String top = javaClass.getName().split("\\$", 2)[0];
                return top.equals("io.dbtasks.DbTasks")
                        ? SliceIdentifier.of("io.dbtasks.DbTasks (entry point)")
                        : SliceIdentifier.of("io.dbtasks (vocabulary)");
            }
            return pkg.startsWith("io.dbtasks.") ? SliceIdentifier.of(pkg) : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "core packages, the root's entry point and vocabulary apart";
        }
    };

    @Test
    void coreNeverImportsSpring() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.springframework..")
                .check(CORE);
    }

    @Test
    void apiTypesOtherThanTheEntryPointDoNotUseInternals() {
        // DbTasks wires the engine; every other public type is a plain value, interface or exception.
        noClasses()
                .that()
                .resideInAPackage("io.dbtasks")
                .and()
                .doNotHaveSimpleName("DbTasks")
                .and()
                .doNotHaveFullyQualifiedName("io.dbtasks.DbTasks$Builder")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.dbtasks.internal..")
                .check(CORE);
    }

    /**
     * The core packages, the root included, depend on each other without cycles: the entry point on
     * top, then the engine's wiring, its role packages above their plumbing, the capabilities ({@code lock} and its {@code spi}, {@code once}, {@code
     * job}, {@code schedule}, {@code batch}, {@code inbox}, {@code event}), and the root's vocabulary
     * at the bottom (see {@link #CORE_PACKAGES}).
     */
    @Test
    void corePackagesRootIncludedHaveNoCycles() {
        slices().assignedFrom(CORE_PACKAGES).should().beFreeOfCycles().check(CORE);
    }

    @Test
    void publicCapabilityPackagesDoNotUseInternals() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "io.dbtasks.lock..",
                        "io.dbtasks.once..",
                        "io.dbtasks.limit..",
                        "io.dbtasks.inbox..",
                        "io.dbtasks.event..",
                        "io.dbtasks.job..",
                        "io.dbtasks.batch..",
                        "io.dbtasks.workflow..",
                        "io.dbtasks.schedule..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.dbtasks.internal..")
                .check(CORE);
    }

    @Test
    void dialectSeamDoesNotReachIntoTheEngine() {
        noClasses()
                .that()
                .resideInAPackage("io.dbtasks.internal.dialect..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "io.dbtasks.internal",
                        "io.dbtasks.internal.claim",
                        "io.dbtasks.internal.execution",
                        "io.dbtasks.internal.lease",
                        "io.dbtasks.internal.completion",
                        "io.dbtasks.internal.enqueue",
                        "io.dbtasks.internal.query",
                        "io.dbtasks.internal.maintenance",
                        "io.dbtasks.internal.support")
                .check(CORE);
    }
}
