package io.dbtasks;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The layering of the core, enforced: the API does not lean on the engine, and no Spring anywhere. */
class ArchitectureTest {
    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.dbtasks");
    private static final JavaClasses CORE_WITHOUT_ROOT = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(
                    location -> !location.matches(java.util.regex.Pattern.compile(".*/io/dbtasks/[^/]+\\.class")))
            .importPackages("io.dbtasks");

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
     * The capabilities ({@code lock} with its {@code spi}, {@code once}, {@code inbox}, {@code event},
     * and {@code internal}, the engine, with its subpackages) depend on each other without cycles.
     * The root package is left out: {@code DbTasks}, the one entry point, wires the engine that
     * implements it.
     */
    @Test
    void capabilityPackagesHaveNoCycles() {
        slices().matching("io.dbtasks.(*)..").should().beFreeOfCycles().check(CORE_WITHOUT_ROOT);
    }

    @Test
    void publicCapabilityPackagesDoNotUseInternals() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "io.dbtasks.lock..",
                        "io.dbtasks.once..",
                        "io.dbtasks.inbox..",
                        "io.dbtasks.event..",
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
                .resideInAPackage("io.dbtasks.internal")
                .check(CORE);
    }
}
